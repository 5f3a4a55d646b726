package sqldriver_test

import (
	"context"
	"database/sql"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// openOwnPG starts a PostgreSQL server of t's own and opens a database/sql
// pool on it, closed when t ends.
func openOwnPG(t *testing.T) (*adbctest.PGServer, *sql.DB) {
	lib := adbctest.Shared(t, "libadbc_driver_postgresql.so")
	srv := adbctest.StartPG(t)
	db, err := sql.Open("adbc", "driver="+lib+";uri="+srv.URI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return srv, db
}

// database/sql's pool over a PostgreSQL server (of the test's own) whose
// backend is killed mid-query, then the whole server killed and
// restarted: the query in flight fails with an IO error, the dead
// connections leave the pool, and the next query succeeds once the server
// is back, without the caller retrying.
func TestPostgresPoolHeals(t *testing.T) {
	srv, db := openOwnPG(t)
	ctx := context.Background()
	one := func() error {
		var x int64
		return db.QueryRowContext(ctx, "SELECT 1::int8").Scan(&x)
	}

	// A backend killed while its rows stream.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "SELECT g::int8 FROM generate_series(1, 10000000) g")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		if n++; n == 100_000 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rows.Err(); !errors.Is(err, adbcerr.IO) || n >= 10_000_000 {
		t.Errorf("rows ended after %d rows with %v, want an error wrapping adbcerr.IO", n, err)
	}
	rows.Close()
	conn.Close()
	adbctest.Reaped(t, pid)
	if st := db.Stats(); st.OpenConnections != 0 {
		t.Errorf("the dead connection stayed in the pool: %+v", st)
	}
	// The server ends every connection after a backend's crash and takes
	// new ones once it has recovered.
	if !settle.Eventually(func() bool { return one() == nil }) {
		t.Fatalf("no query succeeded after the backend's crash: %v", one())
	}

	// The whole server killed and restarted while connections idle in the
	// pool: the next query finds each dead (pinged, here on every reuse;
	// by default after a second idle) and runs on a new one.
	defer sqldriver.SetIdleCheck(0)()
	db.SetMaxIdleConns(3)
	var held []*sql.Conn
	for range 3 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.Close()
	}
	if st := db.Stats(); st.Idle != 3 {
		t.Fatalf("pool: %+v, want 3 idle connections", st)
	}
	srv.KillAll(t)
	srv.Restart(t)
	if err := one(); err != nil {
		t.Errorf("the first query after the restart: %v", err)
	}
	// All three at once, so that every dead one is met.
	held = held[:0]
	for i := range 3 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var x int64
		if err := c.QueryRowContext(ctx, "SELECT 1::int8").Scan(&x); err != nil {
			t.Errorf("query %d on a pooled connection after the restart: %v", i+1, err)
		}
	}
	for _, c := range held {
		c.Close()
	}
}

// A query whose pooled connection's server stopped answering (SIGSTOP of
// its backend) returns by its deadline, the ping before reuse included,
// and the pool works again once the server answers.
func TestPostgresPoolDeadline(t *testing.T) {
	_, db := openOwnPG(t)
	defer sqldriver.SetIdleCheck(0)()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	var pid int
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	const deadline = 300 * time.Millisecond
	qctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	var x int64
	err := db.QueryRowContext(qctx, "SELECT 1::int8").Scan(&x)
	took := time.Since(start)
	t.Logf("a query on the pool whose connection's backend is stopped: %v after %v", err, took.Round(time.Millisecond))
	if err == nil || took > deadline+time.Second {
		t.Errorf("the query returned %v after %v, want an error by its %v deadline", err, took, deadline)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	if !settle.Eventually(func() bool { return db.QueryRowContext(ctx, "SELECT 1::int8").Scan(&x) == nil }) {
		t.Errorf("the pool does not work again after SIGCONT")
	}
}
