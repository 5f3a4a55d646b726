// Command ecosystem runs one scenario over the Go ADBC ecosystem, without
// cgo: arrow-adbc's pure-Go Flight SQL driver against arrow-go's example
// Flight SQL server (SQLite through modernc.org/sqlite) on loopback, beside
// cdevice's drivermgr on Arrow's SQLite and PostgreSQL drivers and DuckDB.
// The same code runs over each as an adbc.Driver, and through database/sql
// with cdevice's sqldriver and with arrow-adbc's, and prints what each
// answers:
//
//	go run . -adbc DIR [-postgresql URI] [-duckdb /path/libduckdb.so]
//
// DIR holds Arrow's ADBC drivers (libadbc_driver_sqlite.so,
// libadbc_driver_postgresql.so: ../shared/adbc in this repository's CI).
//
// It is a module of its own, so that gRPC, the Flight SQL driver and
// modernc.org/sqlite stay out of cdevice's go.mod.
package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	arrowsql "github.com/apache/arrow-adbc/go/adbc/sqldriver"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/example"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
)

func main() {
	var c config
	flag.StringVar(&c.adbcDir, "adbc", "", "the folder of Arrow's ADBC drivers (libadbc_driver_sqlite.so, libadbc_driver_postgresql.so)")
	flag.StringVar(&c.postgresql, "postgresql", os.Getenv("ADBC_POSTGRESQL_URI"), "a PostgreSQL server's URI (with -adbc)")
	flag.StringVar(&c.duckdb, "duckdb", os.Getenv("DUCKDB_LIB"), "libduckdb, DuckDB's ADBC driver")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "ecosystem:", err)
		os.Exit(1)
	}
}

// config says which databases beside Flight SQL's the scenario runs on
// ("": not).
type config struct{ adbcDir, postgresql, duckdb string }

// A backend is a driver and the options of a database of it.
type backend struct {
	name string
	drv  adbc.Driver
	opts map[string]string
}

// run serves Flight SQL on loopback, runs the scenario on every backend
// given through every route, and prints one line each.
func run(ctx context.Context, w io.Writer, c config) error {
	addr, stop, err := serveFlightSQL()
	if err != nil {
		return err
	}
	defer stop()
	backends := []backend{{"flightsql", flightsql.NewDriver(memory.DefaultAllocator), map[string]string{"uri": "grpc+tcp://" + addr}}}
	dir, err := os.MkdirTemp("", "ecosystem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if c.adbcDir != "" {
		backends = append(backends, backend{"sqlite", drivermgr.Driver{},
			map[string]string{"driver": filepath.Join(c.adbcDir, "libadbc_driver_sqlite.so"), "uri": "file:" + filepath.Join(dir, "eco.db")}})
		if c.postgresql != "" {
			backends = append(backends, backend{"postgresql", drivermgr.Driver{},
				map[string]string{"driver": filepath.Join(c.adbcDir, "libadbc_driver_postgresql.so"), "uri": c.postgresql}})
		}
	}
	if c.duckdb != "" {
		backends = append(backends, backend{"duckdb", drivermgr.Driver{},
			map[string]string{"driver": c.duckdb, "entrypoint": "duckdb_adbc_init", "path": filepath.Join(dir, "eco.duckdb")}})
	}
	for _, b := range backends {
		for _, r := range routes {
			got, err := r.run(ctx, b)
			if err != nil {
				return fmt.Errorf("%s through %s: %w", b.name, r.name, err)
			}
			fmt.Fprintf(w, "%s through %s: %s\n", b.name, r.name, strings.Join(got, ", "))
		}
	}
	return nil
}

// The scenario: a table made, filled and read back, the same SQL on every
// database.
const (
	drop   = "DROP TABLE IF EXISTS eco_t"
	create = "CREATE TABLE eco_t (k INTEGER, v TEXT)"
	insert = "INSERT INTO eco_t VALUES (1, 'one'), (2, 'two'), (3, 'three')"
	query  = "SELECT k, v FROM eco_t ORDER BY k"
)

// A route is a way of running the scenario on a backend.
type route struct {
	name string
	run  func(ctx context.Context, b backend) ([]string, error)
}

var routes = []route{
	{"adbc.Driver", viaADBC},
	{"cdevice's sqldriver", func(ctx context.Context, b backend) ([]string, error) {
		return viaSQL(ctx, sqldriver.Driver{Driver: b.drv}, b.opts)
	}},
	{"arrow-adbc's sqldriver", func(ctx context.Context, b backend) ([]string, error) {
		return viaSQL(ctx, arrowsql.Driver{Driver: b.drv}, b.opts)
	}},
}

// viaADBC runs the scenario through arrow-adbc's interfaces alone.
func viaADBC(ctx context.Context, b backend) (rows []string, err error) {
	db, err := b.drv.NewDatabase(b.opts)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cn, err := db.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	st, err := cn.NewStatement()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for _, q := range []string{drop, create, insert} {
		if err := st.SetSqlQuery(q); err != nil {
			return nil, err
		}
		if _, err := st.ExecuteUpdate(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := st.SetSqlQuery(query); err != nil {
		return nil, err
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		k, v := rec.Column(0), rec.Column(1)
		for i := range int(rec.NumRows()) {
			rows = append(rows, k.ValueStr(i)+" "+v.(*array.String).Value(i))
		}
	}
	return rows, rdr.Err()
}

// viaSQL runs the scenario through database/sql with drv, a database/sql
// driver over an adbc.Driver, its options as a DSN (key=value;...).
func viaSQL(ctx context.Context, drv driver.DriverContext, opts map[string]string) ([]string, error) {
	var dsn []string
	for k, v := range opts {
		dsn = append(dsn, k+"="+v)
	}
	c, err := drv.OpenConnector(strings.Join(dsn, ";"))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: what it made is what it reads
	for _, q := range []string{drop, create, insert} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	rs, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var rows []string
	for rs.Next() {
		var k any
		var v string
		if err := rs.Scan(&k, &v); err != nil {
			return nil, err
		}
		rows = append(rows, fmt.Sprint(k)+" "+v)
	}
	return rows, rs.Err()
}

// serveFlightSQL serves arrow-go's example Flight SQL server (SQLite in
// memory, through modernc.org/sqlite) on a loopback port.
func serveFlightSQL() (addr string, stop func(), err error) {
	db, err := example.CreateDB()
	if err != nil {
		return "", nil, err
	}
	srv, err := example.NewSQLiteFlightSQLServer(db)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	s := flight.NewServerWithMiddleware(nil)
	s.RegisterFlightService(arrowflightsql.NewFlightServer(srv))
	if err := s.Init("127.0.0.1:0"); err != nil {
		db.Close()
		return "", nil, err
	}
	go s.Serve()
	return s.Addr().String(), func() { s.Shutdown(); db.Close() }, nil
}
