package drivermgr_test

// One table of scenarios run on three real C drivers through the manager:
// Arrow's SQLite and PostgreSQL drivers (../shared/adbc) and DuckDB's
// (libduckdb from npm). What the drivers do differently is a field of
// their row in scDrivers, with a comment, never a test of a driver's name.
//
// PostgreSQL needs a server: ADBC_POSTGRESQL_URI (.ci/postgres start runs a
// throwaway one and prints it). DuckDB needs $DUCKDB_LIB, or the library
// examples/duckdb/ci.sh lib fetched into its cache. Without them those
// drivers' scenarios skip, saying why (and fail under CI=true).
//
// Sizes: -short reads 100k rows of the big result and ingests 10k rows;
// without it, 10M and 1M.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// scDriver is one driver's row: how to reach it, and every way it differs
// from the others in what the scenarios check.
type scDriver struct {
	name string
	// options are the database's options; they skip the test (fail
	// under CI=true) where the driver or its server is missing.
	options func(t *testing.T) map[string]string
	// param is the n-th (from 1) parameter's placeholder.
	param func(n int) string

	ddlRows   int64    // the rows ExecuteUpdate says CREATE/ALTER/DROP TABLE affected
	noRows    int64    // the rows it says a DELETE that matched nothing affected
	types     []scType // every type of the database (scenario_types_test.go)
	nullType  string   // the Arrow type of SELECT NULL
	tableCols []string // Arrow types of the columns (INTEGER, VARCHAR(20), DOUBLE PRECISION) of an empty table
	declared  []string // and their types as GetTableSchema gives them
	nullCols  []string // and of the same columns holding only NULLs
	// series is the SQL of the rows (i BIGINT, s TEXT = 'row' || i) for
	// i = 1..%d, in order, streamed as they are made.
	series string
	// block computes for long before its single row (long where the driver
	// can be cancelled, a second or so where it cannot).
	block string
	// ingestRows: what IngestStream and an ingest's ExecuteUpdate say they
	// wrote, for n rows written.
	ingestRows func(n int64) int64
	// paramSchema is GetParameterSchema of "SELECT b FROM t WHERE a = <param
	// 1>", as "name:type" per field.
	paramSchema []string
	// multiRow: what binding several rows of parameters at once does, to
	// an INSERT (a batch, a stream) or a query (StatusOK: the statement
	// runs for each row; a query's result is each row's result in turn).
	multiRow adbc.Status

	meta       scMeta
	partitions adbc.Status // ExecutePartitions of a query, and ReadPartition
	cancel     scCancel
	syntax     scErr // "SELEC 1"
	unique     scErr // a duplicate primary key, through ExecuteUpdate
	// uniqueQuery is the same duplicate through ExecuteQuery.
	uniqueQuery scErr
}

// scMeta is what a driver's metadata calls answer.
type scMeta struct {
	vendor, driver    string // GetInfo's vendor name and driver name
	tableType         string // the type GetTableTypes and GetObjects give a table
	catalog, dbSchema string // where GetObjects finds a table made here
	statistics        adbc.Status
	statisticNames    adbc.Status
	executeSchema     adbc.Status
	missingTable      adbc.Status // GetTableSchema of a table that does not exist
}

// scCancel is what a driver does when a query's context is cancelled.
// Whatever the driver, a reader whose context has ended reads no further
// (its Next fails with the context's error, the driver not asked), and a
// call in flight as it ends fails with the context's error.
type scCancel struct {
	// stmtCancel is what Statement.Cancel answers (on an idle
	// statement).
	stmtCancel adbc.Status
	// during is the error of an ExecuteQuery whose deadline passes while
	// the driver computes and that came back within its grace: the
	// driver's own (a driver that takes the cancel), or the context's
	// (Timeout) where the driver returned a result, which is released.
	// Where the driver took longer (it cannot cancel, or a loaded machine
	// made it slow) the call is abandoned instead, whatever this says.
	during scErr
}

// scErr is an expected failure: the call that fails ("" for none), the
// status, the SQLSTATE ("" for none: five zero bytes) and a piece of the
// message.
type scErr struct {
	at       string
	code     adbc.Status
	sqlState string
	msg      string
	detail   string // the key of an error detail the driver gives ("": none asked)
}

// scDrivers is the table of drivers.
var scDrivers = []*scDriver{
	{
		name:    "sqlite",
		options: scSQLiteOptions,
		param:   func(int) string { return "?" },
		ddlRows: 0,
		noRows:  0,
		types:   scSQLiteTypes,
		// The driver infers each column's type from the values it reads:
		// with none (a NULL, no rows, only NULLs), int64.
		nullType:  "int64",
		tableCols: []string{"int64", "int64", "int64"},
		// GetTableSchema infers the types from the table's rows, as a
		// query does (an empty table's would all be int64).
		declared: []string{"int64", "utf8", "float64"},
		nullCols: []string{"int64", "int64", "int64"},
		series:   "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d) SELECT i, 'row' || i AS s FROM g",
		// No StatementCancel: a query that ends by itself (10M rows, a few
		// seconds), abandoned at its deadline.
		block:      "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 10000000) SELECT count(*) FROM g",
		ingestRows: func(n int64) int64 { return n },
		// Parameters have no type before they are bound: null, named by
		// position.
		paramSchema: []string{"0:null"},
		multiRow:    adbc.StatusOK,
		meta: scMeta{vendor: "SQLite", driver: "ADBC SQLite Driver", tableType: "table", catalog: "main", dbSchema: "",
			statistics: adbc.StatusNotImplemented, statisticNames: adbc.StatusNotImplemented,
			executeSchema: adbc.StatusNotImplemented, missingTable: adbc.StatusNotFound},
		partitions: adbc.StatusNotImplemented,
		// No StatementCancel (ADBC 1.1 driver, the function answers
		// NotImplemented): a cancelled context stops nothing in the
		// driver. ExecuteQuery, which computes the result, is abandoned:
		// its caller gets the context's error at once, the connection
		// answers ErrAbandoned until the driver returns.
		cancel: scCancel{stmtCancel: adbc.StatusNotImplemented,
			during: scErr{at: "ExecuteQuery", code: adbc.StatusTimeout, msg: "context deadline exceeded"}},
		// Errors carry no SQLSTATE.
		syntax: scErr{at: "ExecuteQuery", code: adbc.StatusInvalidArgument, msg: "syntax error"},
		unique: scErr{at: "ExecuteUpdate", code: adbc.StatusIO, msg: "UNIQUE constraint failed"},
		// Through ExecuteQuery the driver loses its message: Internal,
		// "(unknown error)" (Arrow's C driver manager gets the same).
		uniqueQuery: scErr{at: "ExecuteQuery", code: adbc.StatusInternal, msg: "(unknown error)"},
	},
	{
		name:    "postgresql",
		options: scPostgresOptions,
		param:   func(n int) string { return "$" + strconv.Itoa(n) },
		ddlRows: -1,
		noRows:  0,
		types:   scPostgresTypes,
		// An untyped NULL is text.
		nullType:  "utf8",
		tableCols: []string{"int32", "utf8", "float64"},
		declared:  []string{"int32", "utf8", "float64"},
		nullCols:  []string{"int32", "utf8", "float64"},
		// generate_series in the select list streams; in FROM it would be
		// materialized (a tuplestore) before the first row.
		series:      "SELECT i, 'row' || i AS s FROM (SELECT generate_series(1, %d::bigint) AS i) g",
		block:       "SELECT pg_sleep(600)",
		ingestRows:  func(n int64) int64 { return n },
		paramSchema: []string{"$1:int32"},
		multiRow:    adbc.StatusOK,
		meta: scMeta{vendor: "PostgreSQL", driver: "ADBC PostgreSQL Driver", tableType: "table", catalog: "postgres", dbSchema: "public",
			statistics: adbc.StatusOK, statisticNames: adbc.StatusOK,
			executeSchema: adbc.StatusOK, missingTable: adbc.StatusNotFound},
		partitions: adbc.StatusNotImplemented,
		cancel: scCancel{stmtCancel: adbc.StatusOK,
			// ExecuteQuery waits for the query's first rows; cancelled,
			// it returns a reader (whose first Next would fail): released,
			// the context's error instead.
			during: scErr{at: "ExecuteQuery", code: adbc.StatusTimeout, msg: "context deadline exceeded"}},
		syntax: scErr{at: "ExecuteQuery", code: adbc.StatusInvalidArgument, sqlState: "42601", msg: "syntax error"},
		// A constraint violation is InvalidArgument (not Integrity).
		// The driver's details (ADBC 1.1): the server's diagnostic fields.
		unique: scErr{at: "ExecuteUpdate", code: adbc.StatusInvalidArgument, sqlState: "23505", msg: "duplicate key value violates unique constraint",
			detail: "PG_DIAG_CONSTRAINT_NAME"},
		uniqueQuery: scErr{at: "ExecuteQuery", code: adbc.StatusInvalidArgument, sqlState: "23505", msg: "duplicate key value violates unique constraint",
			detail: "PG_DIAG_CONSTRAINT_NAME"},
	},
	{
		name:    "duckdb",
		options: scDuckDBOptions,
		param:   func(int) string { return "?" },
		ddlRows: -1,
		// A DELETE that matched nothing says -1 (unknown), not 0.
		noRows: -1,
		types:  scDuckDBTypes,
		// An untyped NULL is INTEGER.
		nullType:    "int32",
		tableCols:   []string{"int32", "utf8", "float64"},
		declared:    []string{"int32", "utf8", "float64"},
		nullCols:    []string{"int32", "utf8", "float64"},
		series:      "SELECT i, 'row' || i AS s FROM range(1, %d + 1) t(i)",
		block:       "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3",
		ingestRows:  func(n int64) int64 { return n },
		paramSchema: []string{"0:null"},
		// One row of parameters at a time: "Binding multiple rows at once
		// is not supported yet".
		multiRow: adbc.StatusNotImplemented,
		meta: scMeta{vendor: "duckdb", driver: "ADBC DuckDB Driver", tableType: "BASE TABLE", catalog: "memory", dbSchema: "main",
			statistics: adbc.StatusOK, statisticNames: adbc.StatusOK, executeSchema: adbc.StatusOK,
			// A missing table is a Catalog Error, Internal.
			missingTable: adbc.StatusInternal},
		partitions: adbc.StatusNotImplemented,
		cancel: scCancel{stmtCancel: adbc.StatusOK,
			// ExecuteQuery, which computes the first chunk, says
			// InvalidArgument.
			during: scErr{at: "ExecuteQuery", code: adbc.StatusInvalidArgument, msg: "Interrupted"}},
		// The query is prepared when it is set: the syntax error comes
		// from SetSqlQuery, as Internal. No SQLSTATE on any error.
		syntax:      scErr{at: "SetSqlQuery", code: adbc.StatusInternal, msg: "syntax error"},
		unique:      scErr{at: "ExecuteUpdate", code: adbc.StatusInvalidArgument, msg: "violates primary key constraint"},
		uniqueQuery: scErr{at: "ExecuteQuery", code: adbc.StatusInvalidArgument, msg: "violates primary key constraint"},
	},
}

// scScenario is one row of the scenario table. isolate runs it in a child
// process, so that a crash there (a driver's or the manager's) fails that
// scenario, not the whole test binary.
type scScenario struct {
	name    string
	isolate bool
	run     func(e *scEnv)
}

var scScenarios = []scScenario{
	{name: "ddl_dml", run: scDDLDML},
	{name: "types", run: scTypes},
	{name: "nulls", run: scNulls},
	{name: "empty", run: scEmpty},
	{name: "big_result", run: scBigResult},
	{name: "ingest", run: scIngest},
	{name: "prepared", run: scPrepared},
	{name: "transactions", run: scTransactions},
	{name: "metadata", run: scMetadata},
	// Isolated: a driver that does not implement ExecutePartitions or
	// ReadPartition returns NotImplemented and leaves the AdbcError as it
	// was given (vendor_code ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA,
	// private_data NULL); the manager then calls the driver's
	// ErrorGetDetailCount on it, which in the PostgreSQL driver
	// dereferences that NULL (SIGSEGV). Arrow's C manager asks only when
	// private_data is set.
	{name: "partitions", isolate: true, run: scPartitions},
	{name: "cancel", run: scCancelScenario},
	{name: "errors", run: scErrors},
}

// scChildEnv marks a child process running one isolated scenario.
const scChildEnv = "CDEVICE_ADBC_SCENARIO_CHILD"

func TestScenarios(t *testing.T) {
	for _, d := range scDrivers {
		t.Run(d.name, func(t *testing.T) {
			db, err := drivermgr.Driver{}.NewDatabase(d.options(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := db.Close(); err != nil {
					t.Errorf("Database.Close: %v", err)
				}
			})
			for _, s := range scScenarios {
				t.Run(s.name, func(t *testing.T) {
					if s.isolate && os.Getenv(scChildEnv) == "" {
						scRunChild(t, d.name, s.name)
						return
					}
					s.run(&scEnv{T: t, d: d, db: db, ctx: context.Background()})
				})
			}
		})
	}
}

// scRunChild runs TestScenarios/driver/scenario in a child process and
// fails with its output if the child does.
func scRunChild(t *testing.T, driver, scenario string) {
	args := []string{"-test.run=^TestScenarios$/^" + regexp.QuoteMeta(driver) + "$/^" + regexp.QuoteMeta(scenario) + "$",
		"-test.v", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	out, err := selfexec.Command([]string{scChildEnv + "=1"}, args...).CombinedOutput()
	if err != nil {
		// A crash's first lines say what and where; the rest is every
		// goroutine and the registers.
		t.Fatalf("in a child process: %v\n%s", err, scHead(out, 40))
	}
	if !strings.Contains(string(out), "--- PASS: TestScenarios/"+driver+"/"+scenario) {
		t.Fatalf("the child process did not pass it:\n%s", scTail(out, 60))
	}
	t.Logf("in a child process:\n%s", scTail(out, 20))
}

func scHead(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func scTail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The drivers' options.

func scSQLiteOptions(t *testing.T) map[string]string {
	// A file, so that a second connection sees the same database (the
	// transactions scenario).
	return map[string]string{"driver": sharedADBC(t, "libadbc_driver_sqlite.so"),
		"uri": "file:" + filepath.Join(t.TempDir(), "scenario.db")}
}

func scPostgresOptions(t *testing.T) map[string]string {
	return map[string]string{"driver": sharedADBC(t, "libadbc_driver_postgresql.so"), "uri": adbctest.PostgresURI(t)}
}

func scDuckDBOptions(t *testing.T) map[string]string {
	return map[string]string{"driver": adbctest.DuckDB(t), "entrypoint": "duckdb_adbc_init"}
}

// Sizes.

func scBigRows() int64 {
	if testing.Short() {
		return 100_000
	}
	return 10_000_000
}

func scIngestRows() int64 {
	if testing.Short() {
		return 10_000
	}
	return 1_000_000
}

// scEnv is a scenario's view of one driver.
type scEnv struct {
	*testing.T
	d   *scDriver
	db  adbc.Database
	ctx context.Context
}

// conn opens a connection, closed when the test ends.
func (e *scEnv) conn() adbc.Connection {
	e.Helper()
	c, err := e.db.Open(e.ctx)
	if err != nil {
		e.Fatal(err)
	}
	e.Cleanup(func() {
		if err := c.Close(); err != nil {
			e.Errorf("Connection.Close: %v", err)
		}
	})
	return c
}

// stmt makes a statement of c for sql, closed when the test ends (and
// sooner by the caller).
func (e *scEnv) stmt(c adbc.Connection, sql string) adbc.Statement {
	e.Helper()
	st, err := c.NewStatement()
	if err != nil {
		e.Fatal(err)
	}
	e.Cleanup(func() { st.Close() })
	if err := st.SetSqlQuery(sql); err != nil {
		e.Fatalf("%s: %v", sql, err)
	}
	return st
}

// exec runs sql for its effect and returns the rows it affected.
func (e *scEnv) exec(c adbc.Connection, sql string) int64 {
	e.Helper()
	st := e.stmt(c, sql)
	defer st.Close()
	n, err := st.ExecuteUpdate(e.ctx)
	if err != nil {
		e.Fatalf("%s: %v", sql, err)
	}
	return n
}

// table drops name if it is there, and again when the test ends.
func (e *scEnv) table(c adbc.Connection, name string) {
	e.Helper()
	e.exec(c, "DROP TABLE IF EXISTS "+name)
	e.Cleanup(func() {
		// on a connection of its own: c may be closed by then
		c2, err := e.db.Open(context.Background())
		if err != nil {
			return
		}
		defer c2.Close()
		if st, err := c2.NewStatement(); err == nil {
			if st.SetSqlQuery("DROP TABLE IF EXISTS "+name) == nil {
				st.ExecuteUpdate(context.Background())
			}
			st.Close()
		}
	})
}

// query runs sql and returns its schema and batches (released when the
// test ends).
func (e *scEnv) query(c adbc.Connection, sql string) (*arrow.Schema, []arrow.RecordBatch) {
	e.Helper()
	st := e.stmt(c, sql)
	defer st.Close()
	return e.read(st, sql)
}

// read executes st and reads its whole result (before st is closed: the
// PostgreSQL driver invalidates a statement's reader when it closes).
func (e *scEnv) read(st adbc.Statement, what string) (*arrow.Schema, []arrow.RecordBatch) {
	e.Helper()
	r, _, err := st.ExecuteQuery(e.ctx)
	if err != nil {
		e.Fatalf("%s: %v", what, err)
	}
	defer r.Release()
	var out []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		e.Cleanup(rec.Release)
		out = append(out, rec)
	}
	if err := r.Err(); err != nil {
		e.Fatalf("%s: %v", what, err)
	}
	return r.Schema(), out
}

// rows is the number of rows of batches.
func scRows(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

// scColumn concatenates column j of batches into one cell list: the batch
// and row of each.
type scCell struct {
	a arrow.Array
	i int
}

func scColumn(recs []arrow.RecordBatch, j int) []scCell {
	var out []scCell
	for _, r := range recs {
		for i := range int(r.NumRows()) {
			out = append(out, scCell{r.Column(j), i})
		}
	}
	return out
}

// scInt is an integer cell of any integer type.
func scInt(c scCell) int64 {
	switch a := c.a.(type) {
	case *array.Int64:
		return a.Value(c.i)
	case *array.Int32:
		return int64(a.Value(c.i))
	case *array.Int16:
		return int64(a.Value(c.i))
	case *array.Int8:
		return int64(a.Value(c.i))
	case *array.Uint64:
		return int64(a.Value(c.i))
	}
	panic("not an integer: " + c.a.DataType().String())
}

// scStr is a cell as a string ("NULL" for a null), copied: arrow-go's
// strings point into the batch, which is the driver's memory until it is
// released.
func scStr(c scCell) string {
	if c.a.IsNull(c.i) {
		return "NULL"
	}
	if s, ok := c.a.(*array.String); ok {
		return strings.Clone(s.Value(c.i))
	}
	return c.a.ValueStr(c.i)
}

func scTypeNames(fields []arrow.Field) []string {
	var out []string
	for _, f := range fields {
		out = append(out, scTypeName(f))
	}
	return out
}

// status checks that err has the status want (StatusOK: nil).
func (e *scEnv) status(what string, err error, want adbc.Status) {
	e.Helper()
	if want == adbc.StatusOK {
		if err != nil {
			e.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	var ae adbc.Error
	if !errors.As(err, &ae) {
		e.Errorf("%s: %v, want an adbc.Error with status %v", what, err, want)
		return
	}
	if ae.Code != want {
		e.Errorf("%s: status %v (%v), want %v", what, ae.Code, err, want)
	}
	if !errors.Is(err, adbcerr.Of(want)) {
		e.Errorf("%s: errors.Is(%v, the %v sentinel) is false", what, err, want)
	}
}

// failure checks a failure against want: the step that failed, the
// status, the SQLSTATE and the message.
func (e *scEnv) failure(what, at string, err error, want scErr) {
	e.Helper()
	if at != want.at {
		e.Errorf("%s: failed at %q (%v), want at %q", what, at, err, want.at)
		return
	}
	if want.at == "" {
		return
	}
	var ae adbc.Error
	if !errors.As(err, &ae) {
		e.Errorf("%s: %v is no adbc.Error", what, err)
		return
	}
	e.status(what, err, want.code)
	state := strings.TrimRight(string(ae.SqlState[:]), "\x00")
	if state != want.sqlState {
		e.Errorf("%s: SQLSTATE %q, want %q (%v)", what, state, want.sqlState, err)
	}
	if !strings.Contains(ae.Msg, want.msg) {
		e.Errorf("%s: message %q, want it to say %q", what, ae.Msg, want.msg)
	}
	if want.detail != "" && !slices.ContainsFunc(ae.Details, func(d adbc.ErrorDetail) bool { return d.Key() == want.detail }) {
		e.Errorf("%s: details %v, want one named %s", what, ae.Details, want.detail)
	}
	e.Logf("%s: %s: status %v, SQLSTATE %q, %d details: %q", what, at, ae.Code, state, len(ae.Details), scFirstLine(ae.Msg))
}

func scFirstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// ---- the scenarios ----

// scDDLDML: CREATE, INSERT, UPDATE, DELETE, ALTER, DROP, and the rows each
// says it affected.
func scDDLDML(e *scEnv) {
	c := e.conn()
	e.table(c, "sc_ddl")
	if n := e.exec(c, "CREATE TABLE sc_ddl (a INTEGER PRIMARY KEY, b VARCHAR(20))"); n != e.d.ddlRows {
		e.Errorf("CREATE TABLE affected %d rows, want %d", n, e.d.ddlRows)
	}
	for _, s := range []struct {
		sql  string
		rows int64
	}{
		{"INSERT INTO sc_ddl VALUES (1, 'one'), (2, 'two'), (3, 'three')", 3},
		{"UPDATE sc_ddl SET b = b || '!' WHERE a > 1", 2},
		{"DELETE FROM sc_ddl WHERE a = 1", 1},
	} {
		if n := e.exec(c, s.sql); n != s.rows {
			e.Errorf("%s: %d rows affected, want %d", s.sql, n, s.rows)
		}
	}
	if n := e.exec(c, "DELETE FROM sc_ddl WHERE a = 42"); n != e.d.noRows {
		e.Errorf("a DELETE of nothing affected %d rows, want %d", n, e.d.noRows)
	}
	if n := e.exec(c, "ALTER TABLE sc_ddl ADD COLUMN c INTEGER"); n != e.d.ddlRows {
		e.Errorf("ALTER TABLE affected %d rows, want %d", n, e.d.ddlRows)
	}
	_, recs := e.query(c, "SELECT a, b, c FROM sc_ddl ORDER BY a")
	var got []string
	for k, a := range scColumn(recs, 0) {
		got = append(got, scStr(a)+"/"+scStr(scColumn(recs, 1)[k])+"/"+scStr(scColumn(recs, 2)[k]))
	}
	if s := strings.Join(got, " "); s != "2/two!/NULL 3/three!/NULL" {
		e.Errorf("rows %q", s)
	}
	if n := e.exec(c, "DROP TABLE sc_ddl"); n != e.d.ddlRows {
		e.Errorf("DROP TABLE affected %d rows, want %d", n, e.d.ddlRows)
	}
	_, err := c.GetTableSchema(e.ctx, nil, nil, "sc_ddl")
	e.status("GetTableSchema of the dropped table", err, e.d.meta.missingTable)
}

// scTypes: each type of the database, a row per value and a NULL, read
// through ADBC and compared with the database's own text of the value.
func scTypes(e *scEnv) {
	c := e.conn()
	for k, ty := range e.d.types {
		name := fmt.Sprintf("sc_type_%d", k)
		label := ty.sql
		if label == "" {
			label = "(no type)"
		}
		e.Run(label, func(t *testing.T) {
			e := &scEnv{T: t, d: e.d, db: e.db, ctx: e.ctx}
			e.table(c, name)
			for _, s := range ty.setup {
				e.exec(c, s)
			}
			e.exec(c, fmt.Sprintf("CREATE TABLE %s (id INTEGER, v %s)", name, ty.sql))
			var rows []string
			for i, v := range append(ty.values, "NULL") {
				rows = append(rows, fmt.Sprintf("(%d, %s)", i, v))
			}
			e.exec(c, "INSERT INTO "+name+" VALUES "+strings.Join(rows, ", "))
			text := ty.text
			if text == "" {
				text = "CAST(v AS TEXT)"
			}
			// (hex, format and the like turn a NULL into '')
			text = "CASE WHEN v IS NULL THEN NULL ELSE " + text + " END"
			sc, recs := e.query(c, "SELECT v, "+text+" AS t FROM "+name+" ORDER BY id")
			if !scTypeMatches(sc.Field(0), ty.arrow) {
				t.Fatalf("read as %s, want %s", scTypeName(sc.Field(0)), ty.arrow)
			}
			vals, texts := scColumn(recs, 0), scColumn(recs, 1)
			if len(vals) != len(ty.values)+1 {
				t.Fatalf("%d rows, want %d", len(vals), len(ty.values)+1)
			}
			for i, v := range vals {
				lit := append(ty.values, "NULL")[i]
				if scIsNull(v.a, v.i) != texts[i].a.IsNull(texts[i].i) {
					t.Errorf("%s: Arrow null %v, the database's text %q", lit, scIsNull(v.a, v.i), scStr(texts[i]))
					continue
				}
				if scIsNull(v.a, v.i) {
					continue
				}
				if err := ty.same(v.a, v.i, scStr(texts[i])); err != nil {
					t.Errorf("%s: %v", lit, err)
				}
			}
		})
	}
}

// scNulls: NULL as a literal, in every column of rows, and bound as a
// parameter.
func scNulls(e *scEnv) {
	c := e.conn()
	sc, recs := e.query(c, "SELECT NULL AS n")
	if got := scTypeName(sc.Field(0)); got != e.d.nullType {
		e.Errorf("SELECT NULL is %s, want %s", got, e.d.nullType)
	}
	if scRows(recs) != 1 || recs[0].Column(0).NullN() != 1 {
		e.Errorf("SELECT NULL: %d rows, not one NULL", scRows(recs))
	}

	e.table(c, "sc_nulls")
	e.exec(c, "CREATE TABLE sc_nulls (a INTEGER, b VARCHAR(20), c DOUBLE PRECISION)")
	e.exec(c, "INSERT INTO sc_nulls VALUES (NULL, NULL, NULL), (NULL, NULL, NULL), (NULL, NULL, NULL)")
	sc, recs = e.query(c, "SELECT a, b, c FROM sc_nulls")
	if got := scTypeNames(sc.Fields()); !equalStrings(got, e.d.nullCols) {
		e.Errorf("columns of NULLs read as %v, want %v", got, e.d.nullCols)
	}
	for j := range 3 {
		nulls := 0
		for _, r := range recs {
			nulls += r.Column(j).NullN()
		}
		if nulls != 3 {
			e.Errorf("column %d: %d NULLs, want 3", j, nulls)
		}
	}

	// NULLs bound as parameters, next to values.
	st := e.stmt(c, fmt.Sprintf("INSERT INTO sc_nulls VALUES (%s, %s, %s)", e.d.param(1), e.d.param(2), e.d.param(3)))
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "c", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{7}, []bool{false})
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"x"}, []bool{true})
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{0}, []bool{false})
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := st.Bind(e.ctx, rec); err != nil {
		e.Fatal(err)
	}
	if _, err := st.ExecuteUpdate(e.ctx); err != nil {
		e.Fatal(err)
	}
	st.Close()
	_, recs = e.query(c, "SELECT count(*) FROM sc_nulls WHERE a IS NULL AND b = 'x' AND c IS NULL")
	if got := scInt(scColumn(recs, 0)[0]); got != 1 {
		e.Errorf("bound NULLs: %d rows, want 1", got)
	}
}

// scEmpty: results without rows keep their schema.
func scEmpty(e *scEnv) {
	c := e.conn()
	e.table(c, "sc_empty")
	e.exec(c, "CREATE TABLE sc_empty (a INTEGER, b VARCHAR(20), c DOUBLE PRECISION)")
	for _, q := range []string{
		"SELECT a, b, c FROM sc_empty",
		"SELECT a, b, c FROM sc_empty WHERE a > 0 ORDER BY b",
	} {
		sc, recs := e.query(c, q)
		if n := scRows(recs); n != 0 {
			e.Errorf("%s: %d rows", q, n)
		}
		if got := scTypeNames(sc.Fields()); !equalStrings(got, e.d.tableCols) {
			e.Errorf("%s: columns %v, want %v", q, got, e.d.tableCols)
		}
		if sc.Field(0).Name != "a" || sc.Field(2).Name != "c" {
			e.Errorf("%s: schema %v", q, sc)
		}
	}
	// A filter that keeps nothing of many rows.
	sc, recs := e.query(c, fmt.Sprintf("SELECT * FROM ("+e.d.series+") q WHERE i < 0", 1000))
	if n := scRows(recs); n != 0 || sc.NumFields() != 2 {
		e.Errorf("empty filter: %d rows, schema %v", n, sc)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// scBigResult: the series of scBigRows rows, read batch by batch and
// released as it goes: every row is there, in order, and the Go heap stays
// far below the size of the result (the batches are the driver's memory,
// imported without a copy).
func scBigResult(e *scEnv) {
	c := e.conn()
	n := scBigRows()
	st := e.stmt(c, fmt.Sprintf(e.d.series, n))
	defer st.Close()
	runtime.GC()
	heap0, rss0 := scHeapInuse(), scRSS()
	peak, rssPeak := heap0, rss0
	start := time.Now()
	r, _, err := st.ExecuteQuery(e.ctx)
	if err != nil {
		e.Fatal(err)
	}
	var rows, batches, bytes int64
	want := int64(1)
	for r.Next() {
		rec := r.RecordBatch()
		batches++
		is := rec.Column(0)
		ss := rec.Column(1).(*array.String)
		for i := range int(rec.NumRows()) {
			got := scInt(scCell{is, i})
			if got != want || ss.Value(i) != "row"+strconv.FormatInt(want, 10) {
				e.Fatalf("row %d: %d %q", want, got, ss.Value(i))
			}
			want++
		}
		rows += rec.NumRows()
		bytes += scBatchBytes(rec)
		peak = max(peak, scHeapInuse())
		rssPeak = max(rssPeak, scRSS())
	}
	if err := r.Err(); err != nil {
		e.Fatal(err)
	}
	r.Release()
	elapsed := time.Since(start)
	if rows != n {
		e.Fatalf("%d rows, want %d", rows, n)
	}
	// The bound: an eighth of the result (16 MiB at least, which leaves
	// the -short size unchecked in effect).
	bound := max(bytes/8, 16<<20)
	grew := int64(peak) - int64(heap0)
	e.Logf("%d rows in %d batches, %.0f MiB of Arrow data, in %v; Go heap in use grew by %.1f MiB at most (bound %.0f MiB); RSS grew by %.0f MiB at most",
		rows, batches, float64(bytes)/(1<<20), elapsed.Round(time.Millisecond), float64(grew)/(1<<20), float64(bound)/(1<<20), float64(rssPeak-rss0)/(1<<20))
	if grew > bound {
		e.Errorf("the Go heap grew by %d bytes reading %d bytes of results, more than %d", grew, bytes, bound)
	}
}

func scHeapInuse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// scRSS is the process's resident memory, or 0 where /proc does not say.
func scRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// scBatchBytes is the size of a batch's buffers.
func scBatchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, col := range rec.Columns() {
		walk(col.Data())
	}
	return n
}

// scGen is a reader of generated rows [from, to): id, x = id/2, s =
// "s<id>" (NULL every seventh), b = id is even; made one batch at a time.
type scGen struct {
	mem      memory.Allocator
	from, to int64
	batch    int64
	cur      arrow.RecordBatch
	refs     int64
	onBatch  func(from int64) // called before each batch is made (fault tests)
}

var scGenSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

func scNewGen(mem memory.Allocator, from, to int64) *scGen {
	return &scGen{mem: mem, from: from, to: to, batch: 50_000, refs: 1}
}

func scGenS(id int64) (string, bool) { return "s" + strconv.FormatInt(id, 10), id%7 != 0 }

func (g *scGen) Retain()               { g.refs++ }
func (g *scGen) Schema() *arrow.Schema { return scGenSchema }
func (g *scGen) Err() error            { return nil }
func (g *scGen) RecordBatch() arrow.RecordBatch {
	return g.cur
}
func (g *scGen) Record() arrow.RecordBatch { return g.cur }
func (g *scGen) Release() {
	if g.refs--; g.refs == 0 && g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
}

func (g *scGen) Next() bool {
	if g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
	if g.from >= g.to {
		return false
	}
	if g.onBatch != nil {
		g.onBatch(g.from)
	}
	end := min(g.to, g.from+g.batch)
	b := array.NewRecordBuilder(g.mem, scGenSchema)
	defer b.Release()
	b.Reserve(int(end - g.from))
	ids, xs := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Float64Builder)
	ss, bs := b.Field(2).(*array.StringBuilder), b.Field(3).(*array.BooleanBuilder)
	for id := g.from; id < end; id++ {
		ids.Append(id)
		xs.Append(float64(id) / 2)
		if s, ok := scGenS(id); ok {
			ss.Append(s)
		} else {
			ss.AppendNull()
		}
		bs.Append(id%2 == 0)
	}
	g.cur = b.NewRecordBatch()
	g.from = end
	return true
}

// scIngest: scIngestRows rows from Go through IngestStream (a new table),
// then 10 more through the statement options and BindStream (append),
// read back in full and compared.
func scIngest(e *scEnv) {
	c := e.conn()
	e.table(c, "sc_ingest")
	n := scIngestRows()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	start := time.Now()
	gen := scNewGen(mem, 1, n+1)
	got, err := adbc.IngestStream(e.ctx, c, gen, "sc_ingest", adbc.OptionValueIngestModeCreate, adbc.IngestStreamOptions{})
	gen.Release()
	if err != nil {
		e.Fatal(err)
	}
	if want := e.d.ingestRows(n); got != want {
		e.Errorf("IngestStream wrote %d rows, want %d", got, want)
	}
	took := time.Since(start)

	st, err := c.NewStatement()
	if err != nil {
		e.Fatal(err)
	}
	for k, v := range map[string]string{adbc.OptionKeyIngestTargetTable: "sc_ingest", adbc.OptionKeyIngestMode: adbc.OptionValueIngestModeAppend} {
		if err := st.SetOption(k, v); err != nil {
			e.Fatalf("%s: %v", k, err)
		}
	}
	more := scNewGen(mem, n+1, n+11)
	if err := st.BindStream(e.ctx, more); err != nil {
		e.Fatal(err)
	}
	more.Release()
	got, err = st.ExecuteUpdate(e.ctx)
	if err != nil {
		e.Fatal(err)
	}
	if want := e.d.ingestRows(10); got != want {
		e.Errorf("the append wrote %d rows, want %d", got, want)
	}
	st.Close()
	mem.AssertSize(e, 0) // every exported batch was released

	st = e.stmt(c, "SELECT id, x, s, CAST(b AS INTEGER) AS b FROM sc_ingest ORDER BY id")
	defer st.Close()
	r, _, err := st.ExecuteQuery(e.ctx)
	if err != nil {
		e.Fatal(err)
	}
	defer r.Release()
	id := int64(1)
	for r.Next() {
		rec := r.RecordBatch()
		x := rec.Column(1).(*array.Float64)
		s := rec.Column(2).(*array.String)
		for i := range int(rec.NumRows()) {
			ws, ok := scGenS(id)
			gb := scInt(scCell{rec.Column(3), i})
			if scInt(scCell{rec.Column(0), i}) != id || x.Value(i) != float64(id)/2 || s.IsValid(i) != ok || ok && s.Value(i) != ws || gb != int64(1-id%2) {
				e.Fatalf("row %d reads back as %d %v %q %d", id, scInt(scCell{rec.Column(0), i}), x.Value(i), scStr(scCell{s, i}), gb)
			}
			id++
		}
	}
	if err := r.Err(); err != nil {
		e.Fatal(err)
	}
	if id-1 != n+10 {
		e.Errorf("%d rows read back, want %d", id-1, n+10)
	}
	e.Logf("ingested %d rows in %v, read back in %v", n, took.Round(time.Millisecond), (time.Since(start) - took).Round(time.Millisecond))
}

// scPrepared: a prepared INSERT run once per row of parameters, a
// prepared SELECT run again with other values, the parameters' schema,
// and several rows of parameters bound at once (a batch and a stream to
// an INSERT, a batch to a query).
func scPrepared(e *scEnv) {
	c := e.conn()
	e.table(c, "sc_prep")
	e.table(c, "sc_prep_multi")
	e.exec(c, "CREATE TABLE sc_prep (a INTEGER, b VARCHAR(20))")
	e.exec(c, "CREATE TABLE sc_prep_multi (a INTEGER, b VARCHAR(20))")
	p1, p2 := e.d.param(1), e.d.param(2)

	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	batch := func(as []int64, bs []string) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for k := range as {
			b.Field(0).(*array.Int64Builder).Append(as[k])
			if bs[k] == "NULL" {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(bs[k])
			}
		}
		return b.NewRecordBatch()
	}

	ins := e.stmt(c, "INSERT INTO sc_prep VALUES ("+p1+", "+p2+")")
	if err := ins.Prepare(e.ctx); err != nil {
		e.Fatal(err)
	}
	for k, b := range []string{"one", "NULL", "three", "four", "five", "six"} {
		rec := batch([]int64{int64(k + 1)}, []string{b})
		err := ins.Bind(e.ctx, rec)
		rec.Release()
		if err != nil {
			e.Fatal(err)
		}
		if n, err := ins.ExecuteUpdate(e.ctx); err != nil || n != 1 {
			e.Fatalf("INSERT of row %d: %d rows, %v", k+1, n, err)
		}
	}
	ins.Close()

	sel := e.stmt(c, "SELECT b FROM sc_prep WHERE a = "+p1)
	if err := sel.Prepare(e.ctx); err != nil {
		e.Fatal(err)
	}
	ps, err := sel.GetParameterSchema()
	if err != nil {
		e.Errorf("GetParameterSchema: %v", err)
	} else {
		var got []string
		for _, f := range ps.Fields() {
			got = append(got, f.Name+":"+scTypeName(f))
		}
		if !equalStrings(got, e.d.paramSchema) {
			e.Errorf("GetParameterSchema: %v, want %v", got, e.d.paramSchema)
		}
	}
	one := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bindA := func(as ...int64) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, one)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues(as, nil)
		rec := b.NewRecordBatch()
		defer rec.Release()
		if err := sel.Bind(e.ctx, rec); err != nil {
			e.Fatal(err)
		}
	}
	for _, q := range []struct {
		a    int64
		want string
	}{{1, "one"}, {4, "four"}, {2, "NULL"}, {6, "six"}, {99, ""}} {
		bindA(q.a)
		_, recs := e.read(sel, fmt.Sprintf("the SELECT with a = %d", q.a))
		var got []string
		for _, cell := range scColumn(recs, 0) {
			got = append(got, scStr(cell))
		}
		if strings.Join(got, ",") != q.want {
			e.Errorf("a = %d: %q, want %q", q.a, got, q.want)
		}
	}

	// Several rows at once: to a query...
	bindA(3, 5)
	r, _, err := sel.ExecuteQuery(e.ctx)
	if err == nil {
		var got []string
		for r.Next() {
			for i := range int(r.RecordBatch().NumRows()) {
				got = append(got, scStr(scCell{r.RecordBatch().Column(0), i}))
			}
		}
		err = r.Err()
		r.Release()
		if err == nil && strings.Join(got, ",") != "three,five" {
			e.Errorf("two rows of parameters: %q, want three,five", got)
		}
	}
	e.status("a query with two rows of parameters", err, e.d.multiRow)
	sel.Close()

	// ...and to an INSERT, as a batch and as a stream of two batches.
	multi := e.stmt(c, "INSERT INTO sc_prep_multi VALUES ("+p1+", "+p2+")")
	rec := batch([]int64{1, 2, 3}, []string{"one", "NULL", "three"})
	if err := multi.Bind(e.ctx, rec); err != nil {
		e.Fatal(err)
	}
	rec.Release()
	n, err := multi.ExecuteUpdate(e.ctx)
	e.status("an INSERT of a batch of 3 rows", err, e.d.multiRow)
	if err == nil && n != 3 {
		e.Errorf("an INSERT of a batch of 3 rows affected %d", n)
	}
	r1, r2 := batch([]int64{4, 5}, []string{"four", "five"}), batch([]int64{6}, []string{"six"})
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{r1, r2})
	if err != nil {
		e.Fatal(err)
	}
	r1.Release()
	r2.Release()
	if err := multi.BindStream(e.ctx, rdr); err != nil {
		e.Fatal(err)
	}
	rdr.Release()
	n, err = multi.ExecuteUpdate(e.ctx)
	e.status("an INSERT of a stream of 3 rows", err, e.d.multiRow)
	if err == nil && n != 3 {
		e.Errorf("an INSERT of a stream of 3 rows affected %d", n)
	}
	multi.Close()
	_, recs := e.query(c, "SELECT count(*) FROM sc_prep_multi")
	if got, want := scInt(scColumn(recs, 0)[0]), map[bool]int64{true: 6, false: 0}[e.d.multiRow == adbc.StatusOK]; got != want {
		e.Errorf("the multi-row INSERTs left %d rows, want %d", got, want)
	}
}

// scTransactions: autocommit on by default (Commit and Rollback refused),
// then off: a rollback undoes, a commit publishes to another connection,
// DDL rolls back too, and turning autocommit on again commits.
func scTransactions(e *scEnv) {
	c1, c2 := e.conn(), e.conn()
	e.table(c1, "sc_tx")
	e.table(c1, "sc_tx_ddl")
	e.exec(c1, "CREATE TABLE sc_tx (a INTEGER)")
	opts := c1.(adbc.GetSetOptions)
	count := func(c adbc.Connection) int64 {
		e.Helper()
		_, recs := e.query(c, "SELECT count(*) FROM sc_tx")
		return scInt(scColumn(recs, 0)[0])
	}
	if v, err := opts.GetOption(adbc.OptionKeyAutoCommit); err != nil || v != adbc.OptionValueEnabled {
		e.Errorf("autocommit is %q (%v), want on", v, err)
	}
	e.status("Commit with autocommit on", c1.Commit(e.ctx), adbc.StatusInvalidState)
	e.status("Rollback with autocommit on", c1.Rollback(e.ctx), adbc.StatusInvalidState)

	if err := opts.SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueDisabled); err != nil {
		e.Fatal(err)
	}
	if v, err := opts.GetOption(adbc.OptionKeyAutoCommit); err != nil || v != adbc.OptionValueDisabled {
		e.Errorf("autocommit is %q (%v), want off", v, err)
	}
	e.exec(c1, "INSERT INTO sc_tx VALUES (1)")
	if n1, n2 := count(c1), count(c2); n1 != 1 || n2 != 0 {
		e.Errorf("before Rollback: the writer sees %d rows, the other connection %d; want 1 and 0", n1, n2)
	}
	if err := c1.Rollback(e.ctx); err != nil {
		e.Fatal(err)
	}
	if n := count(c1); n != 0 {
		e.Errorf("after Rollback: %d rows", n)
	}
	e.exec(c1, "INSERT INTO sc_tx VALUES (2)")
	e.exec(c1, "INSERT INTO sc_tx VALUES (3)")
	if n := count(c2); n != 0 {
		e.Errorf("before Commit the other connection sees %d rows", n)
	}
	if err := c1.Commit(e.ctx); err != nil {
		e.Fatal(err)
	}
	if n := count(c2); n != 2 {
		e.Errorf("after Commit the other connection sees %d rows, want 2", n)
	}

	e.exec(c1, "CREATE TABLE sc_tx_ddl (a INTEGER)")
	if err := c1.Rollback(e.ctx); err != nil {
		e.Fatal(err)
	}
	// (asked on c2: on c1 a failure would abort PostgreSQL's transaction)
	_, err := c2.GetTableSchema(e.ctx, nil, nil, "sc_tx_ddl")
	e.status("GetTableSchema of a table made in a rolled-back transaction", err, e.d.meta.missingTable)

	e.exec(c1, "INSERT INTO sc_tx VALUES (4)")
	if err := opts.SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueEnabled); err != nil {
		e.Fatal(err)
	}
	if n := count(c2); n != 3 {
		e.Errorf("after autocommit is turned on again the other connection sees %d rows, want 3 (the pending transaction committed)", n)
	}
	e.exec(c1, "INSERT INTO sc_tx VALUES (5)")
	if n := count(c2); n != 4 {
		e.Errorf("with autocommit on the other connection sees %d rows, want 4", n)
	}
}

// scMetadata: GetInfo, GetTableTypes, GetTableSchema, GetObjects,
// statistics and ExecuteSchema.
func scMetadata(e *scEnv) {
	c := e.conn()
	e.table(c, "sc_meta")
	e.exec(c, "CREATE TABLE sc_meta (a INTEGER, b VARCHAR(20), c DOUBLE PRECISION)")
	e.exec(c, "INSERT INTO sc_meta VALUES (1, 'x', 1.5)")
	m := e.d.meta

	info, err := adbc.GetDriverInfo(e.ctx, c)
	if err != nil {
		e.Fatal(err)
	}
	if info.VendorName != m.vendor || info.DriverName != m.driver || info.VendorVersion == "" {
		e.Errorf("GetInfo: vendor %q %q, driver %q; want %q, %q", info.VendorName, info.VendorVersion, info.DriverName, m.vendor, m.driver)
	}
	e.Logf("GetInfo: %s %s, %s %s, ADBC %d", info.VendorName, info.VendorVersion, info.DriverName, info.DriverVersion, info.DriverADBCVersion)

	r, err := c.GetTableTypes(e.ctx)
	if err != nil {
		e.Fatal(err)
	}
	var types []string
	for r.Next() {
		for _, cell := range scColumn([]arrow.RecordBatch{r.RecordBatch()}, 0) {
			types = append(types, scStr(cell))
		}
	}
	r.Release()
	if !strings.Contains("\x00"+strings.Join(types, "\x00")+"\x00", "\x00"+m.tableType+"\x00") {
		e.Errorf("GetTableTypes: %q lacks %q", types, m.tableType)
	}

	sc, err := c.GetTableSchema(e.ctx, nil, nil, "sc_meta")
	if err != nil {
		e.Fatal(err)
	}
	if got := scTypeNames(sc.Fields()); sc.NumFields() != 3 || sc.Field(1).Name != "b" || !equalStrings(got, e.d.declared) {
		e.Errorf("GetTableSchema: %v, want types %v", sc, e.d.declared)
	}
	_, err = c.GetTableSchema(e.ctx, nil, nil, "sc_no_such_table")
	e.status("GetTableSchema of a missing table", err, m.missingTable)

	table := "sc_meta"
	r, err = c.GetObjects(e.ctx, adbc.ObjectDepthAll, nil, nil, &table, nil, nil)
	if err != nil {
		e.Fatal(err)
	}
	found := scFindObjects(r)
	r.Release()
	want := fmt.Sprintf("%s.%s.sc_meta (%s): a b c", m.catalog, m.dbSchema, m.tableType)
	if !strings.Contains("\n"+strings.Join(found, "\n")+"\n", "\n"+want+"\n") {
		e.Errorf("GetObjects: %q lacks %q", found, want)
	}

	gs, ok := c.(adbc.ConnectionGetStatistics)
	if !ok {
		e.Fatal("the manager's connection has no GetStatistics")
	}
	r, err = gs.GetStatistics(e.ctx, nil, &m.dbSchema, &table, true)
	if err == nil {
		err = scDrain(r)
	}
	e.status("GetStatistics", err, m.statistics)
	r, err = gs.GetStatisticNames(e.ctx)
	if err == nil {
		err = scDrain(r)
	}
	e.status("GetStatisticNames", err, m.statisticNames)

	st := e.stmt(c, "SELECT a, b FROM sc_meta")
	es, err := st.(adbc.StatementExecuteSchema).ExecuteSchema(e.ctx)
	e.status("ExecuteSchema", err, m.executeSchema)
	if err == nil && (es.NumFields() != 2 || es.Field(0).Name != "a") {
		e.Errorf("ExecuteSchema: %v", es)
	}
}

// scFindObjects flattens GetObjects' result to "catalog.schema.table
// (type): columns" lines.
func scFindObjects(r array.RecordReader) []string {
	var out []string
	for r.Next() {
		rec := r.RecordBatch()
		cats := rec.Column(0).(*array.String)
		schemas := rec.Column(1).(*array.List)
		for i := range int(rec.NumRows()) {
			ss := schemas.ListValues().(*array.Struct)
			s0, s1 := schemas.ValueOffsets(i)
			for s := int(s0); s < int(s1); s++ {
				sname := ss.Field(0).(*array.String).Value(s)
				tables := ss.Field(1).(*array.List)
				ts := tables.ListValues().(*array.Struct)
				t0, t1 := tables.ValueOffsets(s)
				for tb := int(t0); tb < int(t1); tb++ {
					cols := ts.Field(2).(*array.List)
					cs := cols.ListValues().(*array.Struct)
					c0, c1 := cols.ValueOffsets(tb)
					var names []string
					for k := int(c0); k < int(c1); k++ {
						names = append(names, cs.Field(0).(*array.String).Value(k))
					}
					out = append(out, fmt.Sprintf("%s.%s.%s (%s): %s", cats.Value(i), sname,
						ts.Field(0).(*array.String).Value(tb), ts.Field(1).(*array.String).Value(tb), strings.Join(names, " ")))
				}
			}
		}
	}
	return out
}

func scDrain(r array.RecordReader) error {
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// scPartitions: ExecutePartitions and ReadPartition where a driver has
// them; NotImplemented where it does not.
func scPartitions(e *scEnv) {
	c := e.conn()
	st := e.stmt(c, fmt.Sprintf(e.d.series, 1000))
	sc, parts, _, err := st.ExecutePartitions(e.ctx)
	e.status("ExecutePartitions", err, e.d.partitions)
	if err == nil {
		var rows int64
		for _, p := range parts.PartitionIDs {
			r, err := c.ReadPartition(e.ctx, p)
			if err != nil {
				e.Fatal(err)
			}
			for r.Next() {
				rows += r.RecordBatch().NumRows()
			}
			if err := r.Err(); err != nil {
				e.Error(err)
			}
			r.Release()
		}
		if rows != 1000 || sc == nil {
			e.Errorf("%d partitions held %d rows, want 1000 (schema %v)", parts.NumPartitions, rows, sc)
		}
		return
	}
	r, err := c.ReadPartition(e.ctx, []byte("no such partition"))
	if err == nil {
		r.Release()
	}
	e.status("ReadPartition", err, e.d.partitions)
}

// scCancelScenario: a context cancelled after a few batches, before the
// first one, from another goroutine while the batches stream, and while
// ExecuteQuery computes. A reader whose context has ended reads no
// further batch and says so (the context's error, whatever the driver);
// ExecuteQuery ends as the driver's row says. Afterwards nothing is left
// held (imports, handles, C memory, goroutines) and the connection still
// works.
func scCancelScenario(e *scEnv) {
	c := e.conn()
	long := fmt.Sprintf(e.d.series, int64(1e12))
	idle := e.stmt(c, "SELECT 1")
	e.status("Statement.Cancel", idle.(drivermgr.Canceller).Cancel(), e.d.cancel.stmtCancel)
	idle.Close()
	base, goroutines := scSettled(cdevice.LiveLeaks()), runtime.NumGoroutine()

	for _, v := range []struct {
		name  string
		after int // batches read before the cancel (-1: cancelled by another goroutine)
	}{{"after 3 batches", 3}, {"before the first batch", 0}, {"by another goroutine", -1}} {
		ctx, cancel := context.WithCancel(e.ctx)
		st := e.stmt(c, long)
		r, _, err := st.ExecuteQuery(ctx)
		if err != nil {
			cancel()
			e.Fatalf("%s: %v", v.name, err)
		}
		var cancelled atomic.Bool
		stopAt := func() { cancel(); cancelled.Store(true) }
		if v.after == 0 {
			stopAt()
		}
		if v.after < 0 {
			go func() {
				time.Sleep(20 * time.Millisecond)
				stopAt()
			}()
		}
		// Read on: to the end of the reader, or 100 batches (and 30
		// seconds) past the cancel, where the query would run on.
		batches, past := 0, 0
		deadline := time.Now().Add(30 * time.Second)
		for past <= 100 && time.Now().Before(deadline) {
			was := cancelled.Load()
			if !r.Next() {
				break
			}
			if batches++; was {
				past++
			}
			if batches == v.after {
				stopAt()
			}
		}
		// A batch whose Next began before the cancel may arrive (the
		// other goroutine's case); none whose Next began after it.
		if err := r.Err(); !errors.Is(err, context.Canceled) || past > 0 {
			e.Errorf("cancelled %s: %d batches read after the cancel, Err() = %v; want none and context.Canceled", v.name, past, err)
		}
		e.Logf("cancelled %s: %d batches read, %v", v.name, batches, r.Err())
		r.Release()
		st.Close()
		cancel()
	}

	// While ExecuteQuery computes.
	ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	st := e.stmt(c, e.d.block)
	start := time.Now()
	r, _, err := st.ExecuteQuery(ctx)
	if err == nil {
		e.Errorf("ExecuteQuery past its deadline returned a reader")
		r.Release()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		e.Errorf("cancelled during ExecuteQuery: %v; want context.DeadlineExceeded", err)
	}
	e.Logf("cancelled during ExecuteQuery: ended after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if errors.Is(err, drivermgr.ErrAbandoned) {
		// The caller is back while the driver still computes (it cannot
		// cancel, or took longer than its grace): the connection says so,
		// Close returns at once and the release follows the driver's
		// return (the leak check below).
		if _, err := c.NewStatement(); !errors.Is(err, drivermgr.ErrAbandoned) || !errors.Is(err, adbcerr.InvalidState) {
			e.Errorf("NewStatement beside an abandoned call: %v; want ErrAbandoned", err)
		}
	} else {
		// The call came back within its grace: the driver's own error
		// where it gave one.
		e.failure("cancelled during ExecuteQuery", "ExecuteQuery", err, e.d.cancel.during)
	}
	st.Close()
	cancel()

	if got := scSettled(base); scLeakKey(got) != scLeakKey(base) {
		e.Errorf("after the cancels %v is held, before them %v", got, base)
	}
	if !settle.Eventually(func() bool { return runtime.NumGoroutine() <= goroutines }) {
		n := runtime.NumGoroutine()
		e.Errorf("%d goroutines after the cancels, %d before", n, goroutines)
	}
	_, recs := e.query(c, "SELECT 42")
	if got := scInt(scColumn(recs, 0)[0]); got != 42 {
		e.Errorf("the connection after the cancels: SELECT 42 is %d", got)
	}
}

// scLeakKey is what a scenario must give back: imports, exports, handles
// and C allocations.
func scLeakKey(l cdevice.Leaks) [4]int64 {
	return [4]int64{l.Imports(), l.Exports(), int64(l.Handles), l.CAllocations}
}

// scSettled lets finalizers of dropped values run until the counts are
// want's (settle.Eventually), and returns them.
func scSettled(want cdevice.Leaks) cdevice.Leaks {
	var l cdevice.Leaks
	settle.Eventually(func() bool { l = cdevice.LiveLeaks(); return scLeakKey(l) == scLeakKey(want) })
	return l
}

// scErrors: a syntax error and a unique violation, with the status and
// SQLSTATE each driver gives (or none), errors.Is by status, and the
// connection usable afterwards.
func scErrors(e *scEnv) {
	c := e.conn()
	at, err := scRun(e, c, "SELEC 1", false)
	e.failure("syntax error", at, err, e.d.syntax)

	e.table(c, "sc_err")
	e.exec(c, "CREATE TABLE sc_err (a INTEGER PRIMARY KEY)")
	e.exec(c, "INSERT INTO sc_err VALUES (1)")
	at, err = scRun(e, c, "INSERT INTO sc_err VALUES (1)", true)
	e.failure("unique violation", at, err, e.d.unique)
	at, err = scRun(e, c, "INSERT INTO sc_err VALUES (1)", false)
	e.failure("unique violation through ExecuteQuery", at, err, e.d.uniqueQuery)

	_, recs := e.query(c, "SELECT count(*) FROM sc_err")
	if got := scInt(scColumn(recs, 0)[0]); got != 1 {
		e.Errorf("after the errors: %d rows, want 1", got)
	}
}

// scRun runs sql (ExecuteUpdate, or ExecuteQuery and the whole reader)
// and says which call failed and how.
func scRun(e *scEnv, c adbc.Connection, sql string, update bool) (string, error) {
	st, err := c.NewStatement()
	if err != nil {
		e.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		return "SetSqlQuery", err
	}
	if update {
		if _, err := st.ExecuteUpdate(e.ctx); err != nil {
			return "ExecuteUpdate", err
		}
		return "", nil
	}
	r, _, err := st.ExecuteQuery(e.ctx)
	if err != nil {
		return "ExecuteQuery", err
	}
	defer r.Release()
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		return "Next", err
	}
	return "", nil
}
