package bench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for database/sql

	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
)

// Concurrency: 1, 8 and 32 goroutines run the same small query (100 rows
// of one integer, every value scanned) through database/sql with a pool of
// as many connections, on each side: ADBC (sqldriver over drivermgr and
// the C driver) and the database's own Go client (pgx's stdlib, modernc's
// sqlite, duckdb-go with cgo). The figure is queries/s over the whole
// run; the ratio in the README is ADBC's over the client's in one run:
//
//	go test -run '^$' -bench ConcurrentQueries -benchtime 4000x .
func BenchmarkConcurrentQueries(b *testing.B) {
	for _, db := range []struct {
		name  string
		query string
		sides func(b *testing.B) map[string]func(b *testing.B) *sql.DB
	}{
		{"postgresql", "SELECT g::int8 FROM generate_series(1, 100) g", func(b *testing.B) map[string]func(b *testing.B) *sql.DB {
			uri := postgresURI(b)
			return map[string]func(b *testing.B) *sql.DB{
				"adbc": func(b *testing.B) *sql.DB {
					return adbcSQL(b, "driver="+sharedDriver(b, "libadbc_driver_postgresql.so")+";uri="+uri)
				},
				"pgx": func(b *testing.B) *sql.DB { return openSQL(b, "pgx", uri) },
			}
		}},
		{"sqlite", "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100) SELECT i FROM s", func(b *testing.B) map[string]func(b *testing.B) *sql.DB {
			dir := b.TempDir()
			return map[string]func(b *testing.B) *sql.DB{
				"adbc": func(b *testing.B) *sql.DB {
					return adbcSQL(b, "driver="+sharedDriver(b, "libadbc_driver_sqlite.so")+";uri=file:"+filepath.Join(dir, "adbc.db"))
				},
				"modernc": func(b *testing.B) *sql.DB { return openSQL(b, "sqlite", "file:"+filepath.Join(dir, "modernc.db")) },
			}
		}},
		{"duckdb", "SELECT range FROM range(100)", func(b *testing.B) map[string]func(b *testing.B) *sql.DB {
			sides := map[string]func(b *testing.B) *sql.DB{
				"adbc": func(b *testing.B) *sql.DB {
					if duckdbInterposed != "" {
						b.Skip(duckdbInterposed)
					}
					return adbcSQL(b, "driver="+duckdbLib(b)+";entrypoint=duckdb_adbc_init")
				},
			}
			if duckdbGoSQL != nil {
				sides["duckdb-go"] = duckdbGoSQL
			}
			return sides
		}},
	} {
		b.Run(db.name, func(b *testing.B) {
			sides := db.sides(b)
			for _, side := range []string{"adbc", "pgx", "modernc", "duckdb-go"} {
				open, ok := sides[side]
				if !ok {
					continue
				}
				for _, g := range []int{1, 8, 32} {
					b.Run(fmt.Sprintf("%s/g=%d", side, g), func(b *testing.B) {
						concurrentQueries(b, open(b), db.query, g)
					})
				}
			}
		})
	}
}

// duckdbGoSQL is duckdb-go through database/sql (set by the cgo file; nil
// without it).
var duckdbGoSQL func(b *testing.B) *sql.DB

func adbcSQL(b *testing.B, dsn string) *sql.DB {
	cn, err := sqldriver.Driver{Driver: drivermgr.Driver{}}.OpenConnector(dsn)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(cn)
	b.Cleanup(func() { db.Close() })
	return db
}

func openSQL(b *testing.B, driver, dsn string) *sql.DB {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// concurrentQueries runs b.N queries on db from g goroutines (a pool of g
// connections, opened before the timer) and reports queries/s.
func concurrentQueries(b *testing.B, db *sql.DB, query string, g int) {
	db.SetMaxOpenConns(g)
	db.SetMaxIdleConns(g)
	ctx := context.Background()
	one := func() error {
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				return err
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != 100 {
			return fmt.Errorf("%d rows, want 100", n)
		}
		return nil
	}
	// Warm the pool: g connections at once.
	conns := make([]*sql.Conn, g)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Close()
	}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range g {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := one(); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "queries/s")
}
