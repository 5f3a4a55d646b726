package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/ebitengine/purego"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/stream"
)

// EnvLib names the environment variable that holds libduckdb's path; the
// -lib flag overrides it.
const EnvLib = "DUCKDB_LIB"

// ErrNoLibrary: libduckdb could not be loaded (not given, not found, or too
// old to have the functions this example calls).
var ErrNoLibrary = errors.New("duckdb: library not loaded")

// Lib is a loaded libduckdb: the few C functions this example calls, bound
// with purego. Handles (duckdb_database, duckdb_connection) are C pointers
// held as uintptr; structs we hand to DuckDB live in C memory
// (duckdb_malloc, cdevice.New).
type Lib struct {
	Path    string
	Version string

	adbcInit func(version int32, driver, err unsafe.Pointer) uint8 // AdbcStatusCode: uint8_t
	malloc   func(n uintptr) unsafe.Pointer
	free     func(p unsafe.Pointer)
	version  func() string

	// The C API, for duckdb_arrow_scan.
	open         func(path string, out unsafe.Pointer) int32
	close        func(db unsafe.Pointer)
	connect      func(db uintptr, out unsafe.Pointer) int32
	disconnect   func(conn unsafe.Pointer)
	query        func(conn uintptr, sql string, res unsafe.Pointer) int32
	destroy      func(res unsafe.Pointer)
	resultError  func(res unsafe.Pointer) string
	columnCount  func(res unsafe.Pointer) uint64
	rowCount     func(res unsafe.Pointer) uint64
	valueVarchar func(res unsafe.Pointer, col, row uint64) unsafe.Pointer
	arrowScan    func(conn uintptr, name string, s *abi.ArrayStream) int32
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Lib{}
)

// LoadLib loads libduckdb from path, or from $DUCKDB_LIB when path is
// empty. Loading the same path again returns the same *Lib (a library is
// never unloaded).
func LoadLib(path string) (*Lib, error) {
	if path == "" {
		path = os.Getenv(EnvLib)
	}
	if path == "" {
		return nil, fmt.Errorf("%w: give libduckdb's path with -lib or $%s "+
			"(examples/duckdb/ci.sh fetches it from npm)", ErrNoLibrary, EnvLib)
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if l := loaded[path]; l != nil {
		return l, nil
	}
	h, err := ffi.Open(path) // never from the current directory (see ffi.Open)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrary, err)
	}
	l := &Lib{Path: path}
	for _, f := range []struct {
		fn   any
		name string
	}{
		{&l.adbcInit, "duckdb_adbc_init"},
		{&l.malloc, "duckdb_malloc"},
		{&l.free, "duckdb_free"},
		{&l.version, "duckdb_library_version"},
		{&l.open, "duckdb_open"},
		{&l.close, "duckdb_close"},
		{&l.connect, "duckdb_connect"},
		{&l.disconnect, "duckdb_disconnect"},
		{&l.query, "duckdb_query"},
		{&l.destroy, "duckdb_destroy_result"},
		{&l.resultError, "duckdb_result_error"},
		{&l.columnCount, "duckdb_column_count"},
		{&l.rowCount, "duckdb_row_count"},
		{&l.valueVarchar, "duckdb_value_varchar"},
		{&l.arrowScan, "duckdb_arrow_scan"},
	} {
		sym, err := h.Symbol(f.name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s has no %s (DuckDB 1.1 or newer is needed): %v", ErrNoLibrary, path, f.name, err)
		}
		purego.RegisterFunc(f.fn, sym)
	}
	l.Version = l.version()
	loaded[path] = l
	return l, nil
}

// calloc returns n zeroed bytes of C memory (duckdb_malloc).
func (l *Lib) calloc(n uintptr) unsafe.Pointer {
	p := l.malloc(n)
	if p == nil {
		panic("duckdb_malloc: out of memory") // as new does when the heap is exhausted
	}
	clear(unsafe.Slice((*byte)(p), n))
	return p
}

// goString copies the NUL-terminated C string at p.
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// ---- ADBC ----

// adbcVersion100 is ADBC_VERSION_1_0_0.
const adbcVersion100 = 1000000

// Indexes of the function pointers in struct AdbcDriver (adbc.h, 1.0.0).
const (
	drvDatabaseInit          = 3
	drvDatabaseNew           = 4
	drvDatabaseSetOption     = 5
	drvDatabaseRelease       = 6
	drvConnectionInit        = 12
	drvConnectionNew         = 13
	drvConnectionRelease     = 16
	drvStatementBindStream   = 19
	drvStatementExecuteQuery = 20
	drvStatementNew          = 23
	drvStatementRelease      = 25
	drvStatementSetOption    = 26
	drvStatementSetSQLQuery  = 27
	drvSlots                 = 64 // room for ADBC 1.1's fields too
)

// adbcError mirrors struct AdbcError (1.1.0 layout; 1.0.0 is its prefix).
type adbcError struct {
	message       *byte
	vendorCode    int32
	sqlstate      [5]byte
	release       uintptr
	privateData   uintptr
	privateDriver uintptr
}

// adbcObject mirrors struct AdbcDatabase, AdbcConnection and AdbcStatement.
type adbcObject struct {
	privateData   uintptr
	privateDriver uintptr
}

// DB is one in-memory DuckDB database and one connection to it, opened
// through DuckDB's ADBC driver (duckdb_adbc_init). Its methods serialise
// on a mutex: an ADBC connection is not safe for concurrent use.
type DB struct {
	lib    *Lib
	mu     sync.Mutex
	driver *[drvSlots]uintptr
	db     *adbcObject
	conn   *adbcObject
	closed bool
}

// Open opens an in-memory database through DuckDB's ADBC driver.
func Open(lib *Lib) (*DB, error) {
	if lib == nil {
		return nil, ErrNoLibrary
	}
	d := &DB{
		lib:    lib,
		driver: (*[drvSlots]uintptr)(lib.calloc(unsafe.Sizeof([drvSlots]uintptr{}))),
		db:     (*adbcObject)(lib.calloc(unsafe.Sizeof(adbcObject{}))),
		conn:   (*adbcObject)(lib.calloc(unsafe.Sizeof(adbcObject{}))),
	}
	e := d.newError()
	defer d.freeError(e)
	if st := lib.adbcInit(adbcVersion100, unsafe.Pointer(d.driver), unsafe.Pointer(e)); st != 0 {
		err := d.adbcErr("duckdb_adbc_init", st, e)
		d.freeAll()
		return nil, err
	}
	steps := []struct {
		what string
		fn   int
		args []uintptr
	}{
		{"AdbcDatabaseNew", drvDatabaseNew, []uintptr{uintptr(unsafe.Pointer(d.db))}},
		{"AdbcDatabaseInit", drvDatabaseInit, []uintptr{uintptr(unsafe.Pointer(d.db))}},
		{"AdbcConnectionNew", drvConnectionNew, []uintptr{uintptr(unsafe.Pointer(d.conn))}},
		{"AdbcConnectionInit", drvConnectionInit, []uintptr{uintptr(unsafe.Pointer(d.conn)), uintptr(unsafe.Pointer(d.db))}},
	}
	for i, s := range steps {
		if err := d.call(s.what, s.fn, e, s.args...); err != nil {
			if i >= 3 {
				_ = d.call("AdbcConnectionRelease", drvConnectionRelease, e, uintptr(unsafe.Pointer(d.conn)))
			}
			if i >= 1 {
				_ = d.call("AdbcDatabaseRelease", drvDatabaseRelease, e, uintptr(unsafe.Pointer(d.db)))
			}
			d.freeAll()
			return nil, err
		}
	}
	return d, nil
}

func (d *DB) newError() *adbcError {
	return (*adbcError)(d.lib.calloc(unsafe.Sizeof(adbcError{})))
}

func (d *DB) freeError(e *adbcError) {
	if e.release != 0 {
		purego.SyscallN(e.release, uintptr(unsafe.Pointer(e)))
	}
	d.lib.free(unsafe.Pointer(e))
}

func (d *DB) freeAll() {
	d.lib.free(unsafe.Pointer(d.driver))
	d.lib.free(unsafe.Pointer(d.db))
	d.lib.free(unsafe.Pointer(d.conn))
}

// adbcErr turns a status code and the error it filled into a Go error,
// releasing the error's message.
func (d *DB) adbcErr(what string, status uint8, e *adbcError) error {
	msg := ""
	if e.message != nil {
		msg = goString(unsafe.Pointer(e.message))
	}
	if e.release != 0 {
		purego.SyscallN(e.release, uintptr(unsafe.Pointer(e)))
	}
	*e = adbcError{}
	if msg == "" {
		msg = fmt.Sprintf("ADBC status %d", status)
	}
	return fmt.Errorf("duckdb: %s: %s", what, msg)
}

// call calls the driver's function at index fn with args and e appended.
func (d *DB) call(what string, fn int, e *adbcError, args ...uintptr) error {
	if d.driver[fn] == 0 {
		return fmt.Errorf("duckdb: the ADBC driver has no %s", what)
	}
	args = append(args, uintptr(unsafe.Pointer(e)))
	// AdbcStatusCode is a uint8_t: the rest of the register is not the
	// driver's (on Windows it is not zero).
	st, _, _ := purego.SyscallN(d.driver[fn], args...)
	if uint8(st) != 0 {
		return d.adbcErr(what, uint8(st), e)
	}
	return nil
}

// cstr copies s into C memory; free it with d.lib.free.
func (d *DB) cstr(s string) unsafe.Pointer {
	p := d.lib.calloc(uintptr(len(s)) + 1)
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return p
}

// statement makes a statement on the connection, with SQL when sql is not
// empty and the options opts (key, value pairs).
func (d *DB) statement(e *adbcError, sql string, opts ...string) (*adbcObject, error) {
	if d.closed {
		return nil, errors.New("duckdb: database closed")
	}
	st := (*adbcObject)(d.lib.calloc(unsafe.Sizeof(adbcObject{})))
	if err := d.call("AdbcStatementNew", drvStatementNew, e, uintptr(unsafe.Pointer(d.conn)), uintptr(unsafe.Pointer(st))); err != nil {
		d.lib.free(unsafe.Pointer(st))
		return nil, err
	}
	fail := func(err error) (*adbcObject, error) {
		d.releaseStatement(st)
		return nil, err
	}
	for i := 0; i+1 < len(opts); i += 2 {
		k, v := d.cstr(opts[i]), d.cstr(opts[i+1])
		err := d.call("AdbcStatementSetOption("+opts[i]+")", drvStatementSetOption, e, uintptr(unsafe.Pointer(st)), uintptr(k), uintptr(v))
		d.lib.free(k)
		d.lib.free(v)
		if err != nil {
			return fail(err)
		}
	}
	if sql != "" {
		q := d.cstr(sql)
		err := d.call("AdbcStatementSetSqlQuery", drvStatementSetSQLQuery, e, uintptr(unsafe.Pointer(st)), uintptr(q))
		d.lib.free(q)
		if err != nil {
			return fail(err)
		}
	}
	return st, nil
}

func (d *DB) releaseStatement(st *adbcObject) {
	e := d.newError()
	_ = d.call("AdbcStatementRelease", drvStatementRelease, e, uintptr(unsafe.Pointer(st)))
	d.freeError(e)
	d.lib.free(unsafe.Pointer(st))
}

// Rows is a query's result: an array.RecordReader over DuckDB's
// ArrowArrayStream, imported with stream.ImportReader. Release it (the
// last Release releases DuckDB's stream and the statement).
type Rows struct {
	*stream.Reader
	refs atomic.Int64
	done func() // releases the statement
}

// Retain adds a reference.
func (r *Rows) Retain() {
	r.refs.Add(1)
	r.Reader.Retain()
}

// Release drops a reference; the last one releases the stream and the
// statement.
func (r *Rows) Release() {
	r.Reader.Release()
	if r.refs.Add(-1) == 0 {
		r.done()
	}
}

// Query runs sql and returns its result as a record reader: DuckDB's
// AdbcStatementExecuteQuery fills an ArrowArrayStream, which
// stream.ImportReader moves into a Reader. opts are stream options
// (import options, say).
func (d *DB) Query(sql string, opts ...stream.Option) (*Rows, error) {
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s) // ImportReader moves the stream out of it
	done, err := d.executeRaw(sql, s)
	if err != nil {
		return nil, err
	}
	r, err := stream.ImportReader(s, opts...)
	if err != nil {
		done()
		return nil, fmt.Errorf("duckdb: importing the result stream: %w", err)
	}
	rows := &Rows{Reader: r, done: done}
	rows.refs.Store(1)
	return rows, nil
}

// executeRaw runs sql and leaves DuckDB's result ArrowArrayStream in s,
// not imported (Query imports it; the import-overhead benchmark reads it
// with bare get_next/release calls). The caller releases s, then calls
// done, which releases the statement.
func (d *DB) executeRaw(sql string, s *abi.ArrayStream) (done func(), err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.newError()
	defer d.freeError(e)
	st, err := d.statement(e, sql)
	if err != nil {
		return nil, err
	}
	if err := d.call("AdbcStatementExecuteQuery", drvStatementExecuteQuery, e,
		uintptr(unsafe.Pointer(st)), uintptr(unsafe.Pointer(s)), 0); err != nil {
		cdevice.ReleaseArrayStream(s)
		d.releaseStatement(st)
		return nil, err
	}
	return func() {
		d.mu.Lock()
		d.releaseStatement(st)
		d.mu.Unlock()
	}, nil
}

// Exec runs sql and discards any result.
func (d *DB) Exec(sql string) error {
	r, err := d.Query(sql)
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// Ingest creates table and fills it with rdr's batches: rdr is exported
// with stream.ExportReader and bound to an ADBC bulk-ingest statement
// (adbc.ingest.target_table, AdbcStatementBindStream). DuckDB takes the
// stream and releases it. Ingest does not release rdr; the export holds
// its own reference until DuckDB lets go.
func (d *DB) Ingest(table string, rdr array.RecordReader) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.newError()
	defer d.freeError(e)
	st, err := d.statement(e, "", "adbc.ingest.target_table", table, "adbc.ingest.mode", "adbc.ingest.mode.create")
	if err != nil {
		return err
	}
	defer d.releaseStatement(st)
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportReader(rdr, s); err != nil {
		return fmt.Errorf("duckdb: exporting the input: %w", err)
	}
	if err := d.call("AdbcStatementBindStream", drvStatementBindStream, e,
		uintptr(unsafe.Pointer(st)), uintptr(unsafe.Pointer(s))); err != nil {
		cdevice.ReleaseArrayStream(s)
		return err
	}
	return d.call("AdbcStatementExecuteQuery", drvStatementExecuteQuery, e, uintptr(unsafe.Pointer(st)), 0, 0)
}

// Close releases the connection and the database. Results still open keep
// working until released only where DuckDB allows it: release them first.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	e := d.newError()
	defer d.freeError(e)
	err1 := d.call("AdbcConnectionRelease", drvConnectionRelease, e, uintptr(unsafe.Pointer(d.conn)))
	err2 := d.call("AdbcDatabaseRelease", drvDatabaseRelease, e, uintptr(unsafe.Pointer(d.db)))
	d.freeAll()
	return errors.Join(err1, err2)
}

// ---- the C API: duckdb_arrow_scan ----

// duckdbResultSize is sizeof(duckdb_result) (48 on 64-bit), rounded up.
const duckdbResultSize = 64

// Conn is a database and connection opened with DuckDB's C API
// (duckdb_open, duckdb_connect), for duckdb_arrow_scan, which ADBC lacks.
type Conn struct {
	lib  *Lib
	mu   sync.Mutex
	db   unsafe.Pointer // duckdb_database* (C memory holding the handle)
	conn unsafe.Pointer // duckdb_connection*
}

// OpenConn opens an in-memory database with DuckDB's C API.
func OpenConn(lib *Lib) (*Conn, error) {
	if lib == nil {
		return nil, ErrNoLibrary
	}
	c := &Conn{lib: lib, db: lib.calloc(8), conn: lib.calloc(8)}
	if lib.open("", c.db) != 0 {
		lib.free(c.db)
		lib.free(c.conn)
		return nil, errors.New("duckdb: duckdb_open failed")
	}
	if lib.connect(*(*uintptr)(c.db), c.conn) != 0 {
		lib.close(c.db)
		lib.free(c.db)
		lib.free(c.conn)
		return nil, errors.New("duckdb: duckdb_connect failed")
	}
	return c, nil
}

// Close disconnects and closes the database.
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		return
	}
	c.lib.disconnect(c.conn)
	c.lib.close(c.db)
	c.lib.free(c.conn)
	c.lib.free(c.db)
	c.db, c.conn = nil, nil
}

// Scan exports rdr with stream.ExportReader and registers it as the view
// name with duckdb_arrow_scan. DuckDB does not take the stream: the
// returned release function releases it (call it after the last query
// that reads the view). A view reads the stream once.
func (c *Conn) Scan(name string, rdr array.RecordReader) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		return nil, errors.New("duckdb: connection closed")
	}
	s := cdevice.New[abi.ArrayStream]()
	if err := stream.ExportReader(rdr, s); err != nil {
		cdevice.Free(s)
		return nil, fmt.Errorf("duckdb: exporting the input: %w", err)
	}
	release = func() {
		cdevice.ReleaseArrayStream(s)
		cdevice.Free(s)
	}
	if c.lib.arrowScan(*(*uintptr)(c.conn), name, s) != 0 {
		release()
		return nil, fmt.Errorf("duckdb: duckdb_arrow_scan(%q) failed", name)
	}
	return release, nil
}

// QueryStrings runs sql with duckdb_query and returns its rows, every
// value as DuckDB renders it as VARCHAR ("NULL" for a null): for small
// results, aggregates say.
func (c *Conn) QueryStrings(sql string) ([][]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		return nil, errors.New("duckdb: connection closed")
	}
	res := c.lib.calloc(duckdbResultSize)
	defer c.lib.free(res)
	defer c.lib.destroy(res)
	if c.lib.query(*(*uintptr)(c.conn), sql, res) != 0 {
		return nil, fmt.Errorf("duckdb: %s", c.lib.resultError(res))
	}
	cols, n := c.lib.columnCount(res), c.lib.rowCount(res)
	out := make([][]string, n)
	for r := range n {
		row := make([]string, cols)
		for col := range cols {
			p := c.lib.valueVarchar(res, col, r)
			if p == nil {
				row[col] = "NULL"
				continue
			}
			row[col] = goString(p)
			c.lib.free(p)
		}
		out[r] = row
	}
	return out, nil
}
