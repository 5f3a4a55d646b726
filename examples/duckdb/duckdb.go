package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/ebitengine/purego"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/clib"
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

	malloc  func(n uintptr) unsafe.Pointer
	free    func(p unsafe.Pointer)
	version func() string

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
	h, err := clib.Open(path) // never from the current directory (see clib.Open)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrary, err)
	}
	l := &Lib{Path: path}
	for _, f := range []struct {
		fn   any
		name string
	}{
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

// ---- ADBC, through drivermgr ----

// adbcEntrypoint is DuckDB's ADBC driver entry point.
const adbcEntrypoint = "duckdb_adbc_init"

// DB is one in-memory DuckDB database and one connection to it, opened
// through DuckDB's ADBC driver by drivermgr: arrow-adbc's interfaces, no
// cgo. It is safe for concurrent use (drivermgr serializes a connection's
// calls).
type DB struct {
	db adbc.Database
	cn adbc.Connection
}

// Open opens an in-memory database through DuckDB's ADBC driver.
func Open(lib *Lib) (*DB, error) {
	if lib == nil {
		return nil, ErrNoLibrary
	}
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": lib.Path, "entrypoint": adbcEntrypoint})
	if err != nil {
		return nil, err
	}
	cn, err := db.Open(context.Background())
	if err != nil {
		db.Close()
		return nil, err
	}
	return &DB{db: db, cn: cn}, nil
}

// Rows is a query's result: DuckDB's ArrowArrayStream as drivermgr
// imports it (stream.ImportReader), batch by batch, zero-copy. Release it
// (the last Release closes the statement too).
type Rows struct {
	array.RecordReader
	refs atomic.Int64
	st   adbc.Statement
}

// Retain adds a reference.
func (r *Rows) Retain() {
	r.refs.Add(1)
	r.RecordReader.Retain()
}

// Release drops a reference; the last one releases the stream and the
// statement.
func (r *Rows) Release() {
	r.RecordReader.Release()
	if r.refs.Add(-1) == 0 {
		r.st.Close()
	}
}

// All yields every batch, valid in the loop body, then the error, if any.
func (r *Rows) All() iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for r.Next() {
			if !yield(r.RecordBatch(), nil) {
				return
			}
		}
		if err := r.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// Query runs sql and returns its result as a record reader.
func (d *DB) Query(sql string) (*Rows, error) {
	st, err := d.statement(sql)
	if err != nil {
		return nil, err
	}
	rdr, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		st.Close()
		return nil, err
	}
	r := &Rows{RecordReader: rdr, st: st}
	r.refs.Store(1)
	return r, nil
}

// statement is a new statement of sql.
func (d *DB) statement(sql string) (adbc.Statement, error) {
	st, err := d.cn.NewStatement()
	if err != nil {
		return nil, err
	}
	if err := st.SetSqlQuery(sql); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// Exec runs sql for its effect.
func (d *DB) Exec(sql string) error {
	st, err := d.statement(sql)
	if err != nil {
		return err
	}
	_, err = st.ExecuteUpdate(context.Background())
	return errors.Join(err, st.Close())
}

// Ingest creates table and fills it with rdr's batches through ADBC bulk
// ingest (arrow-adbc's adbc.IngestStream: rdr bound with BindStream,
// exported by drivermgr with stream.ExportReader; DuckDB takes the stream
// and releases it). Ingest does not release rdr.
func (d *DB) Ingest(table string, rdr array.RecordReader) error {
	_, err := adbc.IngestStream(context.Background(), d.cn, rdr, table, adbc.OptionValueIngestModeCreate, adbc.IngestStreamOptions{})
	return err
}

// Close closes the connection and the database (and first what of them
// is still open: drivermgr closes children first).
func (d *DB) Close() error {
	return errors.Join(d.cn.Close(), d.db.Close())
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
