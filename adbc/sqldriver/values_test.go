package sqldriver_test

import (
	"database/sql"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
)

// An empty BLOB is an empty []byte, not nil: nil is NULL's.
func TestSQLiteEmptyBytesAreNotNull(t *testing.T) {
	db := openSQLite(t)
	var empty, null []byte
	if err := db.QueryRow("SELECT x'', NULL").Scan(&empty, &null); err != nil {
		t.Fatal(err)
	}
	if empty == nil || len(empty) != 0 || null != nil {
		t.Errorf("x'' scanned as %#v, NULL as %#v; want []byte{} and nil", empty, null)
	}
}

// A string parameter that is not UTF-8 is refused (InvalidArgument), as
// Arrow's strings must be UTF-8 (DuckDB's driver aborted the process on
// one); bytes go as []byte.
func TestSQLiteInvalidUTF8Parameter(t *testing.T) {
	db := openSQLite(t)
	var got any
	err := db.QueryRow("SELECT ?", "\xff\xfe").Scan(&got)
	if !errors.Is(err, adbcerr.InvalidArgument) {
		t.Errorf("a string that is not UTF-8: %v, want InvalidArgument", err)
	}
	if err := db.QueryRow("SELECT ?", []byte("\xff\xfe")).Scan(&got); err != nil {
		t.Errorf("the same bytes as []byte: %v", err)
	}
}

// openPG opens a pool on the shared PostgreSQL server of one connection
// (what one connection leaves behind, the next user meets), closed with t.
func openPG(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("adbc", "driver="+adbctest.Shared(t, "libadbc_driver_postgresql.so")+";uri="+adbctest.PostgresURI(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

// A result closed before its end (QueryRow reads one row) with a
// timestamptz bound: PostgreSQL's driver commits the transaction it opened
// for the query only at the stream's end, so the pooled connection stayed
// in it, and the next autocommit INSERT was never committed (seen from
// another pool: 0 rows, and lost at Close).
func TestPostgresEarlyCloseKeepsWrites(t *testing.T) {
	other := openPG(t)
	table := "cdevice_early_close_" + time.Now().Format("150405") + "_" + itoa(os.Getpid())
	mustExec(t, other, "CREATE TABLE "+table+" (i int)")
	// After db's Close (cleanups run last first), which ends a transaction
	// it may have left open, holding the table.
	t.Cleanup(func() { mustExec(t, other, "DROP TABLE "+table) })
	db := openPG(t)
	var ts time.Time
	if err := db.QueryRow("SELECT $1::timestamptz FROM generate_series(1, 3)", time.Now()).Scan(&ts); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO "+table+" VALUES (1)")
	var n int
	if err := other.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil || n != 1 {
		t.Errorf("another connection sees %d rows (%v), want the 1 inserted", n, err)
	}
}

// A transaction's isolation level ends with it: the pool's next autocommit
// statement runs at the server's default again.
func TestPostgresIsolationEndsWithTransaction(t *testing.T) {
	db := openPG(t)
	var before, after string
	if err := db.QueryRow("SELECT current_setting('transaction_isolation')").Scan(&before); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(t.Context(), &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		t.Fatal(err)
	}
	var in string
	if err := tx.QueryRow("SELECT current_setting('transaction_isolation')").Scan(&in); err != nil || in != "serializable" {
		t.Errorf("inside: %q, %v", in, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT current_setting('transaction_isolation')").Scan(&after); err != nil || after != before {
		t.Errorf("after the transaction: %q (%v), want %q as before", after, err, before)
	}
}

// NULLs of a driver.Valuer (sql.NullString...) and nil pointers bind to
// parameters whose type the driver knows (a prepared INSERT), as nil does.
func TestPostgresTypedNulls(t *testing.T) {
	db := openPG(t)
	table := "cdevice_typed_nulls_" + time.Now().Format("150405") + "_" + itoa(os.Getpid())
	mustExec(t, db, "CREATE TABLE "+table+" (s text, i int4, ts timestamptz)")
	defer mustExec(t, db, "DROP TABLE "+table)
	st, err := db.Prepare("INSERT INTO " + table + " VALUES ($1, $2, $3)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, args := range [][]any{{sql.NullString{}, sql.NullInt32{}, sql.NullTime{}}, {(*string)(nil), (*int32)(nil), (*time.Time)(nil)}, {nil, nil, nil}} {
		if _, err := st.Exec(args...); err != nil {
			t.Errorf("%T %T %T: %v", args[0], args[1], args[2], err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table + " WHERE s IS NULL AND i IS NULL AND ts IS NULL").Scan(&n); err != nil || n != 3 {
		t.Errorf("%d NULL rows (%v), want 3", n, err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
