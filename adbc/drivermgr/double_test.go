package drivermgr_test

// Tests against testdata/c/adbc_double.c, a C double of an ADBC driver
// that does on demand what real drivers do not: every call failing in
// turn (double_fail_test.go), a 1.0.0-only driver, a NULL
// AdbcDriver.release, lying result streams (double_lie_test.go), and
// counters of every object it makes, so that each test ends by checking
// that everything was released exactly once, on both sides.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// dbl is the loaded double: its path (the "driver" option) and its
// control functions.
type dbl struct {
	t    testing.TB
	path string
	lib  *ffi.Library
	mu   sync.Mutex
	syms map[string]uintptr
	base map[string]int64 // live objects when the test began
}

// The double's lies (LIE_* in adbc_double.c).
const (
	lieNone = iota
	lieRootLonger
	lieChildHuge
	lieNBuffers
	lieNullBuffer
	lieNChildren
	lieNullCount
	lieNullsNoBitmap
	lieNegativeLength
	lieChildNull
	lieChildReleased
	lieGetNextFail
	lieBadSchema
	lieSchemaChildren
	lieNegativeOffset
	lieRootNulls
	nLies
)

// The double's counters of live objects (double_live).
var doubleKinds = []string{"drivers", "databases", "connections", "statements", "streams",
	"arrays", "schemas", "errors", "partitions", "bound"}

// newDouble builds and loads the double, resets it, and checks when t
// ends that nothing is held: the double's objects all released, no call
// on a released object, and cdevice.LiveLeaks back where it was.
func newDouble(t *testing.T) *dbl {
	t.Helper()
	inc := filepath.Dir(sharedADBC(t, filepath.Join("include", "adbc.h")))
	path := ctest.Build(t, "adbc_double", ctest.Options{Include: []string{inc}})
	lib, err := ffi.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &dbl{t: t, path: path, lib: lib, syms: map[string]uintptr{}, base: map[string]int64{}}
	for _, n := range controls {
		d.sym(n) // resolved now: a subtest never fails its parent
	}
	if n := int32(d.call("double_lie", ^uintptr(0))); int(n) != nLies {
		t.Fatalf("the double has %d lies, the test knows %d", n, nLies)
	}
	d.reset()
	// What an earlier test leaked (and failed for) is not this test's.
	for _, k := range doubleKinds {
		d.base[k] = d.live(k)
	}
	start := settled(cdevice.LiveLeaks())
	t.Cleanup(func() {
		d.checkClean(t, "at the end of the test", start)
		d.reset()
	})
	return d
}

// controls are the double's control functions.
var controls = []string{"double_reset", "double_fail", "double_fail_detail", "double_calls", "double_fired",
	"double_fn_name", "double_fn_failable", "double_set_version100", "double_set_wait", "double_set_init_gather", "double_set_scribble",
	"double_set_null_release", "double_set_error_always", "double_lie", "double_live", "double_foreign", "double_bound",
	"double_misuse", "double_misuse_msg", "double_entry", "double_version"}

func (d *dbl) sym(name string) uintptr {
	d.mu.Lock()
	defer d.mu.Unlock()
	fn, ok := d.syms[name]
	if !ok {
		var err error
		if fn, err = d.lib.Symbol(name); err != nil {
			d.t.Fatalf("the double has no %s: %v", name, err)
		}
		d.syms[name] = fn
	}
	return fn
}

// call calls the double's function name.
func (d *dbl) call(name string, args ...uintptr) uintptr { return ffi.Call(d.sym(name), args...) }

// callS calls name with a C string first.
func (d *dbl) callS(name, s string, args ...uintptr) uintptr {
	p, err := ffi.CString(s)
	if err != nil {
		d.t.Fatal(err)
	}
	defer ffi.Free(p)
	return d.call(name, append([]uintptr{uintptr(p)}, args...)...)
}

func (d *dbl) reset()                { d.call("double_reset") }
func (d *dbl) calls(fn string) int64 { return int64(d.callS("double_calls", fn)) }
func (d *dbl) live(kind string) int64 {
	return int64(d.callS("double_live", kind))
}
func (d *dbl) misuse() (int64, string) {
	return int64(d.call("double_misuse")), ffi.GoString(d.call("double_misuse_msg"))
}
func (d *dbl) fired() int64              { return int64(d.call("double_fired")) }
func (d *dbl) foreign(kind string) int64 { return int64(d.callS("double_foreign", kind)) }
func (d *dbl) bound(what string) int64   { return int64(d.callS("double_bound", what)) }
func (d *dbl) entry() string             { return ffi.GoString(d.call("double_entry")) }
func (d *dbl) version() int              { return int(int32(d.call("double_version"))) }
func (d *dbl) setV100(on bool)           { d.call("double_set_version100", b2u(on)) }
func (d *dbl) setScribble(on bool)       { d.call("double_set_scribble", b2u(on)) }
func (d *dbl) setWait(ms int)            { d.call("double_set_wait", uintptr(ms)) }
func (d *dbl) setInitGather(n int)       { d.call("double_set_init_gather", uintptr(n)) }
func (d *dbl) setNullRelease(on bool)    { d.call("double_set_null_release", b2u(on)) }
func (d *dbl) setErrorAlways(on bool)    { d.call("double_set_error_always", b2u(on)) }
func (d *dbl) lie(kind, at int)          { d.call("double_lie", uintptr(kind), uintptr(at)) }

func b2u(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// fail arms a failure of the k-th call of fn (from now), with
// details (key, value pairs) where given.
func (d *dbl) fail(t testing.TB, fn string, k int, f failure) {
	t.Helper()
	msg, _ := ffi.CString(f.msg)
	defer ffi.Free(msg)
	var ss uintptr
	if f.sqlstate != "" {
		p, _ := ffi.CString(f.sqlstate)
		defer ffi.Free(p)
		ss = uintptr(p)
	}
	if rc := d.callS("double_fail", fn, uintptr(k), uintptr(f.status), uintptr(msg), ss, uintptr(uint32(f.vendor))); int32(rc) != 0 {
		t.Fatalf("double_fail(%s, %d) refused", fn, k)
	}
	for _, det := range f.details {
		v, _ := ffi.Calloc(uintptr(len(det.Detail) + 1))
		copy(unsafe.Slice((*byte)(v), len(det.Detail)), det.Detail)
		rc := d.callS("double_fail_detail", det.Name, uintptr(v), uintptr(len(det.Detail)))
		ffi.Free(v)
		if int32(rc) != 0 {
			t.Fatalf("double_fail_detail(%s) refused", det.Name)
		}
	}
}

// functions are the double's functions, and whether double_fail can fail
// each.
func (d *dbl) functions() (names []string, failable map[string]bool) {
	failable = map[string]bool{}
	for i := 0; ; i++ {
		p := d.call("double_fn_name", uintptr(i))
		if p == 0 {
			return names, failable
		}
		n := ffi.GoString(p)
		names = append(names, n)
		failable[n] = int32(d.call("double_fn_failable", uintptr(i))) != 0
	}
}

// held lists what the double holds beyond what it held when the test
// began ("" when nothing), and calls on released or foreign objects.
func (d *dbl) held() string {
	var out []string
	for _, k := range doubleKinds {
		if n := d.live(k) - d.base[k]; n != 0 {
			out = append(out, fmt.Sprintf("%d %s", n, k))
		}
	}
	if n, msg := d.misuse(); n != 0 {
		out = append(out, fmt.Sprintf("%d calls on released or foreign objects (last: %s)", n, msg))
	}
	return strings.Join(out, ", ")
}

// checkClean fails t unless the double holds nothing and cdevice's
// counters are back at start (after letting finalizers run).
func (d *dbl) checkClean(t testing.TB, when string, start cdevice.Leaks) {
	t.Helper()
	if h := d.held(); h != "" {
		t.Errorf("%s, the double still holds: %s", when, h)
	}
	if l := settledTo(start); l != start {
		t.Errorf("%s, cdevice.LiveLeaks is %v, it was %v", when, l, start)
	}
	d.reset() // reported: not again by the test's own check
}

// settled is LiveLeaks once dropped values' finalizers ran.
func settled(cdevice.Leaks) cdevice.Leaks {
	runtime.GC()
	return cdevice.LiveLeaks()
}

// settledTo waits for LiveLeaks to come back to want
// (settle.Eventually), and returns it.
func settledTo(want cdevice.Leaks) cdevice.Leaks {
	var l cdevice.Leaks
	settle.Eventually(func() bool { l = cdevice.LiveLeaks(); return l == want })
	return l
}

// session opens a database of the double with opts, a connection and a
// statement of it.
func (d *dbl) session(t *testing.T, opts map[string]string) (adbc.Database, adbc.Connection, adbc.Statement) {
	t.Helper()
	db := d.open(t, opts)
	cn, err := db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	return db, cn, st
}

// open loads the double through the manager.
func (d *dbl) open(t *testing.T, opts map[string]string) adbc.Database {
	t.Helper()
	o := map[string]string{"driver": d.path}
	for k, v := range opts {
		o[k] = v
	}
	db, err := drivermgr.Driver{}.NewDatabase(o)
	if err != nil {
		t.Fatalf("NewDatabase: %v", err)
	}
	return db
}

// closesAtOnce closes cs, in order, and fails t unless that returns
// without an error within limit (where a Close waited for a call still
// running in the driver, the call's own length).
func closesAtOnce(t *testing.T, limit time.Duration, cs ...interface{ Close() error }) {
	t.Helper()
	closed := make(chan error, 1)
	go func() {
		var errs []error
		for _, c := range cs {
			errs = append(errs, c.Close())
		}
		closed <- errors.Join(errs...)
	}()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(limit):
		t.Fatal("Close waited for the abandoned call")
	}
}

// closeAll closes what was opened, last first, failing t on an error.
func closeAll(t *testing.T, cs ...interface{ Close() error }) {
	t.Helper()
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].Close(); err != nil {
			t.Errorf("Close (%T): %v", cs[i], err)
		}
	}
}

// readAll reads r to its end, releases it, and returns the int64 values
// of its first column (or, for other types, the row count as len) and its
// error.
func readAll(r array.RecordReader) (vals []int64, rows int64, err error) {
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		rows += rec.NumRows()
		if rec.NumCols() > 0 {
			if c, ok := rec.Column(0).(*array.Int64); ok {
				vals = append(vals, c.Int64Values()...)
			}
		}
	}
	return vals, rows, r.Err()
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// int64Batch is a record batch of one int64 column "p".
func int64Batch(mem memory.Allocator, vals ...int64) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(vals, nil)
	return b.NewRecordBatch()
}

// int64Reader is a reader of batches of int64 values.
func int64Reader(mem memory.Allocator, batches ...[]int64) array.RecordReader {
	var recs []arrow.RecordBatch
	for _, v := range batches {
		recs = append(recs, int64Batch(mem, v...))
	}
	r, err := array.NewRecordReader(recs[0].Schema(), recs)
	if err != nil {
		panic(err) // one schema for all: never
	}
	for _, rec := range recs {
		rec.Release()
	}
	return r
}

// sentinels are adbc's sentinel errors by status.
var sentinels = map[adbc.Status]error{
	adbc.StatusUnknown: adbcerr.Unknown, adbc.StatusNotImplemented: adbcerr.NotImplemented,
	adbc.StatusNotFound: adbcerr.NotFound, adbc.StatusAlreadyExists: adbcerr.AlreadyExists,
	adbc.StatusInvalidArgument: adbcerr.InvalidArgument, adbc.StatusInvalidState: adbcerr.InvalidState,
	adbc.StatusInvalidData: adbcerr.InvalidData, adbc.StatusIntegrity: adbcerr.Integrity,
	adbc.StatusInternal: adbcerr.Internal, adbc.StatusIO: adbcerr.IO,
	adbc.StatusCancelled: adbcerr.Cancelled, adbc.StatusTimeout: adbcerr.Timeout,
	adbc.StatusUnauthenticated: adbcerr.Unauthenticated, adbc.StatusUnauthorized: adbcerr.Unauthorized,
}

// wantStatus fails t unless err is an adbc.Error of status st that
// errors.Is matches with st's sentinel (and no other).
func wantStatus(t testing.TB, what string, err error, st adbc.Status) adbc.Error {
	t.Helper()
	var e adbc.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v (%T) is not an adbc.Error", what, err, err)
		return e
	}
	if e.Code != st {
		t.Errorf("%s: status %v, want %v (%v)", what, e.Code, st, err)
	}
	for s, sentinel := range sentinels {
		if got := errors.Is(err, sentinel); got != (s == st) {
			t.Errorf("%s: errors.Is(err, %v) = %v", what, sentinel, got)
		}
	}
	return e
}

// A day of a user's work through the manager: every call the double
// has, in the order a program makes them. It returns the first error
// (each step runs only while there is none) after closing what it opened.
func workday(d *dbl) (err error) {
	ctx := context.Background()
	// ok records e (the day's first error) and says whether all is well.
	ok := func(what string, e error) bool {
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %w", what, e)
		}
		return err == nil
	}
	// check records a wrong result.
	check := func(what string, good bool, format string, args ...any) bool {
		if !good {
			return ok(what, fmt.Errorf(format, args...))
		}
		return err == nil
	}
	closeLater := func(what string, c interface{ Close() error }) func() {
		return func() { ok(what+".Close", c.Close()) }
	}
	// stream reads a metadata call's stream and checks its schema and rows.
	stream := func(what string, r array.RecordReader, e error, want *arrow.Schema, rows int64) bool {
		if !ok(what, e) {
			return false
		}
		sc := r.Schema()
		_, n, e := readAll(r)
		return ok(what+"'s stream", e) &&
			check(what, n == rows && (want == nil || sc.Equal(want)), "%d rows, schema %v", n, sc)
	}
	long := strings.Repeat("x", 300) // more than the manager's first buffer

	db, e := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": d.path, "a.first": "1", "uri": "double:memory"})
	if !ok("NewDatabase", e) {
		return err
	}
	defer closeLater("Database", db)()
	if !ok("database options", setGetAll(db.(adbc.GetSetOptions), long)) {
		return err
	}

	cn, e := db.Open(ctx)
	if !ok("Open", e) {
		return err
	}
	defer closeLater("Connection", cn)()
	if !ok("connection options", setGetAll(cn.(adbc.GetSetOptions), long)) {
		return err
	}
	info, e := adbc.GetDriverInfo(ctx, cn)
	if !ok("GetDriverInfo", e) || !check("GetDriverInfo", info.VendorName == "Double" &&
		info.DriverName == "ADBC Double Driver" && info.DriverADBCVersion == adbc.AdbcVersion1_1_0, "%+v", info) {
		return err
	}
	r, e := cn.GetInfo(ctx, []adbc.InfoCode{adbc.InfoDriverVersion})
	if !stream("GetInfo", r, e, adbc.GetInfoSchema, 1) {
		return err
	}
	for _, depth := range []adbc.ObjectDepth{adbc.ObjectDepthCatalogs, adbc.ObjectDepthAll} {
		r, e := cn.GetObjects(ctx, depth, nil, nil, nil, nil, []string{"TABLE"})
		if !stream("GetObjects", r, e, adbc.GetObjectsSchema, 1) {
			return err
		}
	}
	r, e = cn.GetTableTypes(ctx)
	if !stream("GetTableTypes", r, e, adbc.TableTypesSchema, 2) {
		return err
	}
	sc, e := cn.GetTableSchema(ctx, nil, nil, "t")
	if !ok("GetTableSchema", e) || !check("GetTableSchema", sc.NumFields() == 1 && sc.Field(0).Type.ID() == arrow.INT64, "%v", sc) {
		return err
	}
	gs := cn.(adbc.ConnectionGetStatistics)
	r, e = gs.GetStatistics(ctx, nil, nil, nil, true)
	if !stream("GetStatistics", r, e, adbc.GetStatisticsSchema, 1) {
		return err
	}
	r, e = gs.GetStatisticNames(ctx)
	if !stream("GetStatisticNames", r, e, adbc.GetStatisticNamesSchema, 1) {
		return err
	}
	if !ok("Commit", cn.Commit(ctx)) || !ok("Rollback", cn.Rollback(ctx)) ||
		!ok("Connection.Cancel", cn.(interface{ Cancel() error }).Cancel()) {
		return err
	}

	st, e := cn.NewStatement()
	if !ok("NewStatement", e) {
		return err
	}
	defer closeLater("Statement", st)()
	if !ok("statement options", setGetAll(st.(adbc.GetSetOptions), long)) ||
		!ok("SetSqlQuery", st.SetSqlQuery("rows 10")) || !ok("Prepare", st.Prepare(ctx)) {
		return err
	}
	sc, e = st.(adbc.StatementExecuteSchema).ExecuteSchema(ctx)
	if !ok("ExecuteSchema", e) || !check("ExecuteSchema", sc.NumFields() == 1 && sc.Field(0).Name == "v", "%v", sc) {
		return err
	}
	sc, e = st.GetParameterSchema()
	if !ok("GetParameterSchema", e) || !check("GetParameterSchema", sc.NumFields() == 1, "%v", sc) {
		return err
	}
	r, n, e := st.ExecuteQuery(ctx)
	if !ok("ExecuteQuery", e) {
		return err
	}
	vals, _, e := readAll(r)
	if !ok("ExecuteQuery's stream", e) ||
		!check("ExecuteQuery", n == 10 && slices.Equal(vals, seq(0, 10)), "rows %d, values %v", n, vals) {
		return err
	}

	rec := int64Batch(memory.DefaultAllocator, 1, 2, 3)
	e = st.Bind(ctx, rec)
	rec.Release()
	if !ok("Bind", e) {
		return err
	}
	n, e = st.ExecuteUpdate(ctx)
	if !ok("ExecuteUpdate", e) || !check("ExecuteUpdate after Bind", n == 3, "%d rows", n) {
		return err
	}
	rdr := int64Reader(memory.DefaultAllocator, []int64{10, 20}, []int64{30})
	e = st.BindStream(ctx, rdr)
	rdr.Release()
	if !ok("BindStream", e) {
		return err
	}
	n, e = st.ExecuteUpdate(ctx)
	if !ok("ExecuteUpdate", e) || !check("ExecuteUpdate after BindStream", n == 3, "%d rows", n) {
		return err
	}

	if !ok("SetSubstraitPlan", st.SetSubstraitPlan([]byte("rows 6"))) {
		return err
	}
	sc, parts, n, e := st.ExecutePartitions(ctx)
	if !ok("ExecutePartitions", e) || !check("ExecutePartitions", n == 6 && parts.NumPartitions == 2 && sc != nil &&
		sc.NumFields() == 1, "rows %d, %d partitions, schema %v", n, parts.NumPartitions, sc) {
		return err
	}
	var got []int64
	for _, p := range parts.PartitionIDs {
		r, e := cn.ReadPartition(ctx, p)
		if !ok("ReadPartition", e) {
			return err
		}
		vals, _, e := readAll(r)
		if !ok("ReadPartition's stream", e) {
			return err
		}
		got = append(got, vals...)
	}
	if !check("ReadPartition", slices.Equal(got, seq(0, 6)), "values %v", got) {
		return err
	}
	ok("Statement.Cancel", st.(interface{ Cancel() error }).Cancel())
	return err
}

// setGetAll sets an option of each kind on o and reads it back.
func setGetAll(o adbc.GetSetOptions, long string) error {
	if err := o.SetOption("k.string", "v"); err != nil {
		return err
	}
	if v, err := o.GetOption("k.string"); err != nil || v != "v" {
		return wrong("GetOption", v, err)
	}
	if err := o.SetOption("k.long", long); err != nil {
		return err
	}
	if v, err := o.GetOption("k.long"); err != nil || v != long {
		return wrong("GetOption (long)", len(v), err)
	}
	bs := []byte{0, 1, 2, 0, 255}
	if err := o.SetOptionBytes("k.bytes", bs); err != nil {
		return err
	}
	if v, err := o.GetOptionBytes("k.bytes"); err != nil || !slices.Equal(v, bs) {
		return wrong("GetOptionBytes", v, err)
	}
	if err := o.SetOptionInt("k.int", -1<<40); err != nil {
		return err
	}
	if v, err := o.GetOptionInt("k.int"); err != nil || v != -1<<40 {
		return wrong("GetOptionInt", v, err)
	}
	if err := o.SetOptionDouble("k.double", 2.5); err != nil {
		return err
	}
	if v, err := o.GetOptionDouble("k.double"); err != nil || v != 2.5 {
		return wrong("GetOptionDouble", v, err)
	}
	return nil
}

// wrong is the error of a call that failed (err) or read back v.
func wrong(what string, v any, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s read back %v", what, v)
}

// The day of work succeeds, and every function the double has that a
// day's work can reach is called (the failure test relies on it).
func TestDoubleWorkday(t *testing.T) {
	d := newDouble(t)
	if err := workday(d); err != nil {
		t.Fatal(err)
	}
	if d.entry() != "AdbcDriverInit" || d.version() != 1001000 {
		t.Errorf("loaded through %s at version %d, want AdbcDriverInit at 1001000", d.entry(), d.version())
	}
	names, failable := d.functions()
	for _, n := range names {
		if failable[n] && d.calls(n) == 0 {
			t.Errorf("the day of work never calls %s", n)
		}
	}
	// Bound values reached the driver: 1+2+3, then 10+20+30.
	if rows, sum, batches := d.bound("rows"), d.bound("sum"), d.bound("batches"); rows != 6 || sum != 66 || batches != 3 {
		t.Errorf("the double read %d bound rows in %d batches, sum %d; want 6 rows, 3 batches, sum 66", rows, batches, sum)
	}
}

// (b) A driver of ADBC 1.0.0 only: it loads (1.1.0 refused, then 1.0.0),
// its 1.0 calls work, and every 1.1 call is the manager's
// NotImplemented, never a call into the driver, even where the driver
// wrote 1.1 function pointers it was not asked for (scribble).
func TestDoubleVersion100(t *testing.T) {
	for _, scribble := range []bool{false, true} {
		t.Run(fmt.Sprintf("scribble=%v", scribble), func(t *testing.T) {
			d := newDouble(t)
			d.setV100(true)
			d.setScribble(scribble)
			ctx := context.Background()
			db := d.open(t, map[string]string{"k.string": "v"})
			if d.version() != 1000000 || d.calls("DriverInit") != 2 {
				t.Errorf("initialized at version %d after %d calls; want 1000000 after 2", d.version(), d.calls("DriverInit"))
			}
			cn, err := db.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cn.NewStatement()
			if err != nil {
				t.Fatal(err)
			}
			defer closeAll(t, db, cn, st)

			// 1.0 calls work.
			info, err := adbc.GetDriverInfo(ctx, cn)
			if err != nil || info.DriverADBCVersion != adbc.AdbcVersion1_0_0 {
				t.Errorf("GetDriverInfo: %+v, %v", info, err)
			}
			if err := cn.(adbc.GetSetOptions).SetOption("k", "v"); err != nil {
				t.Error(err)
			}
			if err := st.SetOption("k", "v"); err != nil {
				t.Error(err)
			}
			if err := st.SetSqlQuery("rows 5 batch 2"); err != nil {
				t.Fatal(err)
			}
			r, n, err := st.ExecuteQuery(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if vals, _, err := readAll(r); err != nil || n != 5 || !slices.Equal(vals, seq(0, 5)) {
				t.Errorf("ExecuteQuery: %d rows, %v, %v", n, vals, err)
			}
			rec := int64Batch(memory.DefaultAllocator, 4, 5)
			err = st.Bind(ctx, rec)
			rec.Release()
			if err != nil {
				t.Error(err)
			} else if n, err := st.ExecuteUpdate(ctx); err != nil || n != 2 {
				t.Errorf("ExecuteUpdate: %d, %v", n, err)
			}
			if _, parts, _, err := st.ExecutePartitions(ctx); err != nil || parts.NumPartitions != 2 {
				t.Errorf("ExecutePartitions: %v, %v", parts, err)
			} else if r, err := cn.ReadPartition(ctx, parts.PartitionIDs[1]); err != nil {
				t.Error(err)
			} else if vals, _, err := readAll(r); err != nil || !slices.Equal(vals, seq(2, 3)) {
				t.Errorf("ReadPartition: %v, %v", vals, err)
			}

			// Every 1.1 call: NotImplemented, from the manager.
			gs := cn.(adbc.ConnectionGetStatistics)
			calls11 := map[string]func() error{
				"ConnectionGetStatistics": func() error {
					_, err := gs.GetStatistics(ctx, nil, nil, nil, false)
					return err
				},
				"ConnectionGetStatisticNames": func() error { _, err := gs.GetStatisticNames(ctx); return err },
				"ConnectionCancel":            func() error { return cn.(interface{ Cancel() error }).Cancel() },
				"StatementCancel":             func() error { return st.(interface{ Cancel() error }).Cancel() },
				"StatementExecuteSchema": func() error {
					_, err := st.(adbc.StatementExecuteSchema).ExecuteSchema(ctx)
					return err
				},
			}
			for prefix, o := range map[string]adbc.GetSetOptions{"Database": db.(adbc.GetSetOptions),
				"Connection": cn.(adbc.GetSetOptions), "Statement": st.(adbc.GetSetOptions)} {
				calls11[prefix+"GetOption"] = func() error { _, err := o.GetOption("k.string"); return err }
				calls11[prefix+"GetOptionBytes"] = func() error { _, err := o.GetOptionBytes("k"); return err }
				calls11[prefix+"GetOptionInt"] = func() error { _, err := o.GetOptionInt("k"); return err }
				calls11[prefix+"GetOptionDouble"] = func() error { _, err := o.GetOptionDouble("k"); return err }
				calls11[prefix+"SetOptionBytes"] = func() error { return o.SetOptionBytes("k", []byte{1}) }
				calls11[prefix+"SetOptionInt"] = func() error { return o.SetOptionInt("k", 1) }
				calls11[prefix+"SetOptionDouble"] = func() error { return o.SetOptionDouble("k", 1) }
			}
			for name, call := range calls11 {
				wantStatus(t, name, call(), adbc.StatusNotImplemented)
			}
			// A watched context needs StatementCancel: without it the query
			// runs unwatched.
			cctx, cancel := context.WithCancel(ctx)
			if r, _, err := st.ExecuteQuery(cctx); err != nil {
				t.Error(err)
			} else if _, _, err := readAll(r); err != nil {
				t.Error(err)
			}
			cancel()
			names, _ := d.functions()
			start := slices.Index(names, "ErrorGetDetailCount")
			end := slices.Index(names, "get_schema")
			for _, n := range names[start:end] {
				if c := d.calls(n); c != 0 {
					t.Errorf("the manager called %s of a 1.0.0 driver %d times", n, c)
				}
			}
			if len(calls11)+3 != end-start {
				t.Errorf("tested %d 1.1 calls, the double has %d", len(calls11)+3, end-start)
			}
		})
	}
}

// (b) A 1.0.0 driver's errors: message, SQLSTATE and vendor code, no
// details (a 1.0 AdbcError has none), even where the double was told to
// add some; a stream's failure is get_last_error's, through cdevice.
func TestDoubleVersion100Errors(t *testing.T) {
	d := newDouble(t)
	d.setV100(true)
	ctx := context.Background()
	db, cn, st := d.session(t, nil)
	defer closeAll(t, db, cn, st)
	if err := st.SetSqlQuery("rows 9"); err != nil {
		t.Fatal(err)
	}
	f := failure{status: adbc.StatusIntegrity, msg: "double: 1.0 says no", sqlstate: "23505", vendor: 1234,
		details: []adbc.BinaryErrorDetail{{Name: "k", Detail: []byte("v")}}}
	d.fail(t, "StatementExecuteQuery", 1, f)
	_, _, err := st.ExecuteQuery(ctx)
	e := wantStatus(t, "ExecuteQuery", err, adbc.StatusIntegrity)
	if e.Msg != f.msg || string(e.SqlState[:]) != f.sqlstate || e.VendorCode != 1234 || len(e.Details) != 0 {
		t.Errorf("ExecuteQuery: %#v", e)
	}
	d.fail(t, "get_next", 2, f)
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vals, _, err := readAll(r)
	if !slices.Equal(vals, seq(0, 4)) {
		t.Errorf("read %v before the failure", vals)
	}
	testsupport.WantError(t, "a 1.0 stream's get_next", err, cdevice.ErrProducer)
	if err == nil || !strings.Contains(err.Error(), f.msg) {
		t.Errorf("the stream's error %v does not carry get_last_error's message", err)
	}
	if n := d.calls("ErrorFromArrayStream"); n != 0 {
		t.Errorf("ErrorFromArrayStream of a 1.0 driver called %d times", n)
	}
}

// A driver that fails leaving the AdbcError as it was handed over
// (vendor_code still asking for details, no private_data: PostgreSQL's
// driver for what it does not implement) is not asked for details, which
// it would answer by dereferencing NULL; the error is its status with a
// message of ours.
func TestDoubleErrorLeftUntouched(t *testing.T) {
	d := newDouble(t)
	start := cdevice.LiveLeaks()
	db, cn, st := d.session(t, nil)
	d.fail(t, "StatementSetSqlQuery", 1, failure{status: adbc.StatusNotImplemented})
	err := st.SetSqlQuery("rows 1")
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusNotImplemented || ae.Msg == "" || ae.Details != nil {
		t.Errorf("%v: want NotImplemented with our message and no details", err)
	}
	if n := d.calls("ErrorGetDetailCount"); n != 0 {
		t.Errorf("ErrorGetDetailCount called %d times on an error the driver left untouched", n)
	}
	closeAll(t, st, cn, db)
	d.checkClean(t, "after an untouched error", start)
}

// Every call of a connection and a statement whose database was closed
// (which closed them, and released the driver's table) answers
// InvalidState, never reaching the driver, and so do calls racing the
// close.
func TestDoubleUseAfterDatabaseClose(t *testing.T) {
	d := newDouble(t)
	start := cdevice.LiveLeaks()
	ctx := context.Background()
	use := func(cn adbc.Connection, st adbc.Statement) []error {
		cg := cn.(adbc.GetSetOptions)
		sg := st.(adbc.GetSetOptions)
		_, e1 := cn.GetTableTypes(ctx)
		_, e2 := cn.GetInfo(ctx, nil)
		_, e3 := cg.GetOption("x")
		_, _, e4 := st.ExecuteQuery(ctx)
		_, e5 := st.ExecuteUpdate(ctx)
		_, e6 := st.GetParameterSchema()
		_, e7 := sg.GetOptionInt("x")
		_, e8 := cn.NewStatement()
		return []error{e1, e2, e3, e4, e5, e6, e7, e8, cn.Commit(ctx), cn.Rollback(ctx), st.SetSqlQuery("rows 1"),
			st.Prepare(ctx), sg.SetOptionInt("x", 1), cg.SetOption("x", "y")}
	}
	db, cn, st := d.session(t, nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	calls := d.calls("StatementSetSqlQuery")
	for i, err := range use(cn, st) {
		if !errors.Is(err, adbcerr.InvalidState) {
			t.Errorf("call %d after the database closed: %v; want InvalidState", i, err)
		}
	}
	if n := d.calls("StatementSetSqlQuery") - calls; n != 0 {
		t.Errorf("%d calls reached the driver", n)
	}
	// Racing: goroutines use a connection while its database closes.
	for range 20 {
		db, cn, st := d.session(t, nil)
		done := make(chan struct{})
		for range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for _, err := range use(cn, st) {
					var ae adbc.Error
					if err != nil && !errors.As(err, &ae) {
						t.Errorf("racing the close: %v", err)
					}
				}
			}()
		}
		db.Close()
		for range 4 {
			<-done
		}
	}
	d.checkClean(t, "after uses of closed objects", start)
}

// (c) A driver whose release is NULL (as PostgreSQL's and DuckDB's):
// Database.Close works, and closes the connections still open first.
func TestDoubleNullRelease(t *testing.T) {
	for _, v100 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v100=%v", v100), func(t *testing.T) {
			d := newDouble(t)
			d.setNullRelease(true)
			d.setV100(v100)
			ctx := context.Background()
			db, cn, st := d.session(t, nil)
			if err := st.SetSqlQuery("rows 3"); err != nil {
				t.Fatal(err)
			}
			if r, _, err := st.ExecuteQuery(ctx); err != nil {
				t.Error(err)
			} else if vals, _, err := readAll(r); err != nil || len(vals) != 3 {
				t.Errorf("%v, %v", vals, err)
			}
			if err := db.Close(); err != nil {
				t.Errorf("Database.Close with a connection open: %v", err)
			}
			if _, err := cn.NewStatement(); !errors.Is(err, adbcerr.InvalidState) {
				t.Errorf("NewStatement on a connection its database closed: %v; want InvalidState", err)
			}
			closeAll(t, cn, st) // closed already: nil
			if n := d.calls("DriverRelease"); n != 0 {
				t.Errorf("DriverRelease called %d times", n)
			}
		})
	}
}

// The driver's release runs once, when the database closes, after the
// connections it closes first (their statements and results before them).
func TestDoubleDriverReleaseOnce(t *testing.T) {
	d := newDouble(t)
	ctx := context.Background()
	db := d.open(t, nil)
	cn, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cn2, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closeAll(t, cn)
	if n := d.calls("DriverRelease"); n != 0 {
		t.Errorf("DriverRelease called %d times with the database open", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := d.calls("DriverRelease"); n != 1 {
		t.Errorf("DriverRelease called %d times, want 1", n)
	}
	closeAll(t, cn2) // closed by the database: nil
}

// The entry point is the one derived from the library's name where it has
// it (libadbc_driver_double.so or .dll: AdbcDriverDoubleInit), AdbcDriverInit
// otherwise, or the one the "entrypoint" option names.
func TestDoubleEntrypoint(t *testing.T) {
	d := newDouble(t)
	// A copy (Windows loads no library through a symbolic link), with the
	// platform's suffix: a library of its own, whose double_entry tells.
	// Not in t.TempDir: drivermgr never unloads a driver, and Windows
	// deletes no loaded library, so the removal is a best effort.
	dir, err := os.MkdirTemp("", "double-entry")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	link := filepath.Join(dir, "libadbc_driver_double"+filepath.Ext(d.path))
	b, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cp, err := ffi.Open(link)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	cpSym, err := cp.Symbol("double_entry")
	if err != nil {
		t.Fatal(err)
	}
	cpEntry := func() string { return ffi.GoString(ffi.Call(cpSym)) }
	for _, c := range []struct {
		opts  map[string]string
		entry func() string
		want  string
	}{
		{map[string]string{"driver": d.path}, d.entry, "AdbcDriverInit"},
		{map[string]string{"driver": link}, cpEntry, "AdbcDriverDoubleInit"},
		{map[string]string{"driver": link, "entrypoint": "AdbcDriverInit"}, cpEntry, "AdbcDriverInit"},
	} {
		db, err := drivermgr.Driver{}.NewDatabase(c.opts)
		if err != nil {
			t.Errorf("%v: %v", c.opts, err)
			continue
		}
		if got := c.entry(); got != c.want {
			t.Errorf("%v: entry point %s, want %s", c.opts, got, c.want)
		}
		closeAll(t, db)
	}
	_, err = drivermgr.Driver{}.NewDatabase(map[string]string{"driver": d.path, "entrypoint": "NoSuchInit"})
	wantStatus(t, "a missing entry point", err, adbc.StatusInternal)
}

// (e) Ownership: a bound record batch is the driver's until it releases
// it, once (at the next bind or with the statement); a bound stream is
// read to its end and released once; whatever the driver refuses the
// manager releases; nothing is held after Close.
func TestDoubleBindOwnership(t *testing.T) {
	d := newDouble(t)
	ctx := context.Background()
	mem := testsupport.CheckedAllocator(t)
	db := d.open(t, nil)
	cn, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, db, cn)
	start := settled(cdevice.LiveLeaks())

	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("rows 1"); err != nil {
		t.Fatal(err)
	}
	rec := int64Batch(mem, 5, 6, 7)
	if err := st.Bind(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Release() // the driver's export keeps it
	if l := cdevice.LiveLeaks(); l.ExportedArrays != start.ExportedArrays+1 || d.live("bound") != 1 {
		t.Errorf("after Bind: %d exported arrays (was %d), the double holds %d bound", l.ExportedArrays, start.ExportedArrays, d.live("bound"))
	}
	for range 2 { // read twice: the driver keeps the batch
		if n, err := st.ExecuteUpdate(ctx); err != nil || n != 3 {
			t.Errorf("ExecuteUpdate: %d, %v", n, err)
		}
	}
	if sum := d.bound("sum"); sum != 36 {
		t.Errorf("the double read a sum of %d, want 36", sum)
	}
	// Binding again releases the first batch.
	rec = int64Batch(mem, 1)
	err = st.Bind(ctx, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if a, s := d.foreign("arrays"), d.foreign("schemas"); a != 1 || s != 1 {
		t.Errorf("after a second Bind the double released %d arrays and %d schemas, want 1 and 1", a, s)
	}
	// A stream replaces the batch; Close releases the stream unread.
	rdr := int64Reader(mem, []int64{1, 2}, []int64{3})
	if err := st.BindStream(ctx, rdr); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	if a, s := d.foreign("arrays"), d.foreign("schemas"); a != 2 || s != 2 {
		t.Errorf("after BindStream the double released %d arrays and %d schemas, want 2 and 2", a, s)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := d.foreign("streams"); n != 1 {
		t.Errorf("the double released %d streams, want 1", n)
	}
	if l := settledTo(start); l != start {
		t.Errorf("after Close: LiveLeaks %v, was %v", l, start)
	}

	// A stream read at execution: every batch released once, then the stream.
	st, err = cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("rows 1"); err != nil {
		t.Fatal(err)
	}
	rdr = int64Reader(mem, []int64{100}, []int64{200, 300}, []int64{400})
	if err := st.BindStream(ctx, rdr); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	if n, err := st.ExecuteUpdate(ctx); err != nil || n != 4 {
		t.Errorf("ExecuteUpdate: %d, %v", n, err)
	}
	if d.bound("sum") != 36+1000 || d.foreign("streams") != 2 || d.foreign("arrays") != 2+3 {
		t.Errorf("sum %d, %d streams and %d arrays released", d.bound("sum"), d.foreign("streams"), d.foreign("arrays"))
	}
	if l := settledTo(start); l.ExportedStreams != start.ExportedStreams || l.ExportedArrays != start.ExportedArrays {
		t.Errorf("after the stream was read: LiveLeaks %v, was %v", l, start)
	}

	// What the driver refuses, the manager releases.
	d.fail(t, "StatementBind", 1, failure{status: adbc.StatusInvalidArgument, msg: "no batch for me"})
	rec = int64Batch(mem, 1)
	err = st.Bind(ctx, rec)
	rec.Release()
	wantStatus(t, "a refused Bind", err, adbc.StatusInvalidArgument)
	d.fail(t, "StatementBindStream", 1, failure{status: adbc.StatusInvalidArgument, msg: "no stream for me"})
	rdr = int64Reader(mem, []int64{1})
	err = st.BindStream(ctx, rdr)
	rdr.Release()
	wantStatus(t, "a refused BindStream", err, adbc.StatusInvalidArgument)
	if l := settledTo(start); l.Exports() != start.Exports() {
		t.Errorf("after refused binds: LiveLeaks %v, was %v", l, start)
	}

	// A Go reader that fails: the driver's error says why.
	fr := &failingReader{RecordReader: int64Reader(mem, []int64{1}, []int64{2})}
	err = st.BindStream(ctx, fr)
	fr.Release()
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.ExecuteUpdate(ctx)
	if e := wantStatus(t, "a failing bound stream", err, adbc.StatusIO); !strings.Contains(e.Msg, "the reader broke") {
		t.Errorf("the driver's error %q does not carry the reader's", e.Msg)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if l := settledTo(start); l != start {
		t.Errorf("at the end: LiveLeaks %v, was %v", l, start)
	}
}

// failingReader fails after its first batch.
type failingReader struct {
	array.RecordReader
	n int
}

func (r *failingReader) Next() bool {
	if r.n++; r.n > 1 {
		return false
	}
	return r.RecordReader.Next()
}

func (r *failingReader) Err() error {
	if r.n > 1 {
		return errors.New("the reader broke")
	}
	return nil
}

// (f) Misuse from Go: every call after Close is an InvalidState error,
// never a call into the driver on a released object; a second Close is
// nil.
func TestDoubleUseAfterClose(t *testing.T) {
	d := newDouble(t)
	ctx := context.Background()
	db, cn, st := d.session(t, nil)
	if err := st.SetSqlQuery("rows 9"); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatal(r.Err())
	}

	closeAll(t, st)
	closeAll(t, st)
	for what, err := range map[string]error{
		"SetSqlQuery": st.SetSqlQuery("rows 1"),
		"ExecuteQuery": func() error {
			_, _, err := st.ExecuteQuery(ctx)
			return err
		}(),
		"ExecuteUpdate": func() error { _, err := st.ExecuteUpdate(ctx); return err }(),
		"Prepare":       st.Prepare(ctx),
		"SetOption":     st.SetOption("k", "v"),
		"Bind": func() error {
			rec := int64Batch(memory.DefaultAllocator, 1)
			defer rec.Release()
			return st.Bind(ctx, rec)
		}(),
	} {
		wantStatus(t, "Statement."+what+" after Close", err, adbc.StatusInvalidState)
	}
	// The reader outlives its statement (it is the driver's stream).
	if r.Next(); r.Err() != nil {
		t.Errorf("the reader after its statement's Close: %v", r.Err())
	}

	closeAll(t, cn)
	closeAll(t, cn)
	if r.Next() || r.Err() == nil {
		t.Error("the reader reads on after its connection's Close")
	} else {
		wantStatus(t, "the reader after Connection.Close", r.Err(), adbc.StatusInvalidState)
	}
	r.Release()
	for what, err := range map[string]error{
		"NewStatement":  func() error { _, err := cn.NewStatement(); return err }(),
		"GetInfo":       func() error { _, err := cn.GetInfo(ctx, nil); return err }(),
		"GetTableTypes": func() error { _, err := cn.GetTableTypes(ctx); return err }(),
		"Commit":        cn.Commit(ctx),
		"SetOption":     cn.(adbc.GetSetOptions).SetOption("k", "v"),
	} {
		wantStatus(t, "Connection."+what+" after Close", err, adbc.StatusInvalidState)
	}

	closeAll(t, db)
	closeAll(t, db)
	_, err = db.Open(ctx)
	wantStatus(t, "Database.Open after Close", err, adbc.StatusInvalidState)
	wantStatus(t, "Database.SetOption after Close", db.SetOptions(map[string]string{"k": "v"}), adbc.StatusInvalidState)
	if n, msg := d.misuse(); n != 0 {
		t.Errorf("the manager called the driver on released objects: %s", msg)
	}
}

// (f) Cancel after Close, directly or through the context watch that a
// query's reader keeps: an error, never a call into the driver with a
// released handle.
func TestDoubleCancelAfterClose(t *testing.T) {
	d := newDouble(t)
	db := d.open(t, nil)
	cn, err := db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, db)
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("rows 9"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closeAll(t, st)
	cancel() // the reader's watch of ctx must not cancel a released statement
	time.Sleep(20 * time.Millisecond)
	// The reader's context has ended: it reads no further, as any reader.
	if vals, _, err := readAll(r); !errors.Is(err, context.Canceled) || len(vals) != 0 {
		t.Errorf("the reader after its statement's Close and the cancel: %v, %v; want nothing and context.Canceled", vals, err)
	}
	wantStatus(t, "Statement.Cancel after Close", st.(interface{ Cancel() error }).Cancel(), adbc.StatusInvalidState)
	closeAll(t, cn)
	wantStatus(t, "Connection.Cancel after Close", cn.(interface{ Cancel() error }).Cancel(), adbc.StatusInvalidState)
	if n, c := d.calls("StatementCancel"), d.calls("ConnectionCancel"); n != 0 || c != 0 {
		t.Errorf("the driver's StatementCancel was called %d times and ConnectionCancel %d times after Close", n, c)
	}
}

// (f) Closing a connection before its statement: the statement's Close
// still releases the driver's statement and the manager's C memory.
func TestDoubleStatementClosedAfterConnection(t *testing.T) {
	d := newDouble(t)
	db, cn, st := d.session(t, nil)
	closeAll(t, cn)
	if err := st.Close(); err != nil {
		t.Logf("Statement.Close after Connection.Close: %v", err)
	}
	closeAll(t, db)
	if n := d.live("statements") - d.base["statements"]; n != 0 {
		t.Errorf("Statement.Close after Connection.Close left the driver's statement unreleased (%d live)", n)
	}
}

// A done context cancels a running query (StatementCancel), whose error
// is the driver's Cancelled.
func TestDoubleContextCancels(t *testing.T) {
	d := newDouble(t)
	db, cn, st := d.session(t, nil)
	defer closeAll(t, db, cn, st)
	if err := st.SetSqlQuery("wait"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, _, err := st.ExecuteQuery(ctx)
	// The context's error, with the driver's own (it took the cancel and
	// returned within its grace).
	e := wantStatus(t, "a cancelled query", err, adbc.StatusCancelled)
	if e.Msg != "double: cancelled" || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, drivermgr.ErrAbandoned) || time.Since(t0) > 5*time.Second {
		t.Errorf("the query ended after %v with %v", time.Since(t0), err)
	}
	if n := d.calls("StatementCancel"); n != 1 {
		t.Errorf("StatementCancel called %d times, want 1", n)
	}
	// The driver's own errors, not injected: a syntax error with its SQLSTATE.
	if err := st.SetSqlQuery("select nonsense"); err != nil {
		t.Fatal(err)
	}
	_, _, err = st.ExecuteQuery(context.Background())
	if e := wantStatus(t, "a syntax error", err, adbc.StatusInvalidArgument); string(e.SqlState[:]) != "42601" {
		t.Errorf("SQLSTATE %q", e.SqlState)
	}
	_, err = cn.GetTableSchema(context.Background(), nil, nil, "nope")
	wantStatus(t, "GetTableSchema of no table", err, adbc.StatusNotFound)
	_, err = cn.(adbc.GetSetOptions).GetOptionInt("no.such.option")
	wantStatus(t, "an option never set", err, adbc.StatusNotFound)
}

// A fast stream stops when its context ends, as database/sql's Rows.Next
// does: a Next after the cancel returns false without calling the
// driver's get_next, Err wraps context.Canceled (and adbcerr.Cancelled),
// and a cancel from another goroutine lets through no batch whose Next
// began after it. Whatever the driver does with the statement's cancel
// (here it takes it) is not what the reader's caller waits for.
func TestDoubleCancelStopsStream(t *testing.T) {
	d := newDouble(t)
	db, cn, st := d.session(t, nil)
	defer closeAll(t, db, cn, st)
	if err := st.SetSqlQuery("rows 1000000000000 batch 1024"); err != nil {
		t.Fatal(err)
	}
	t.Run("between batches", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r, _, err := st.ExecuteQuery(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		if !r.Next() {
			t.Fatalf("the first batch: %v", r.Err())
		}
		cancel()
		before := d.calls("get_next")
		for range 3 {
			if r.Next() {
				t.Fatal("Next read a batch after the cancel")
			}
		}
		if n := d.calls("get_next") - before; n != 0 {
			t.Errorf("get_next called %d times after the cancel", n)
		}
		if err := r.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, adbcerr.Cancelled) ||
			errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "canceled") || strings.Contains(err.Error(), "deadline") {
			t.Errorf("Err() = %v; want context.Canceled, said as canceled", err)
		}
	})
	t.Run("from another goroutine", func(t *testing.T) {
		for range 20 {
			ctx, cancel := context.WithCancel(context.Background())
			r, _, err := st.ExecuteQuery(ctx)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			var cancelled atomic.Bool
			go func() {
				time.Sleep(time.Millisecond)
				cancel()
				cancelled.Store(true)
			}()
			past := 0
			for {
				was := cancelled.Load()
				if !r.Next() {
					break
				}
				if was {
					past++
				}
			}
			if err := r.Err(); !errors.Is(err, context.Canceled) || past > 0 {
				t.Errorf("%d batches whose Next began after the cancel, Err() = %v", past, err)
			}
			r.Release()
		}
	})
	t.Run("ended before ExecuteQuery", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cause := errors.New("the user pressed Ctrl-C")
		cancel(cause)
		before := d.calls("StatementExecuteQuery")
		_, _, err := st.ExecuteQuery(ctx)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) || !strings.Contains(err.Error(), cause.Error()) {
			t.Errorf("ExecuteQuery with an ended context: %v; want context.Canceled and its cause", err)
		}
		if n := d.calls("StatementExecuteQuery") - before; n != 0 {
			t.Errorf("the driver was called %d times", n)
		}
		// Every other call that takes a context alike.
		conns, binds := d.calls("ConnectionNew"), d.calls("StatementBind")
		if _, err := db.Open(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Open: %v", err)
		}
		if err := st.Bind(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Bind: %v", err)
		}
		if err := st.BindStream(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("BindStream: %v", err)
		}
		if err := cn.Commit(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Commit: %v", err)
		}
		if _, err := (drivermgr.Driver{}).NewDatabaseWithContext(ctx, map[string]string{"driver": d.path}); !errors.Is(err, context.Canceled) {
			t.Errorf("NewDatabaseWithContext: %v", err)
		}
		if d.calls("ConnectionNew") != conns || d.calls("StatementBind") != binds {
			t.Error("the driver was called with an ended context")
		}
	})
}

// A query whose driver does not stop it (StatementCancel failing: the
// double's "wait" runs its full 1.5 s) is abandoned at its deadline: the
// caller has the context's error at once, the connection answers
// ErrAbandoned, Close of the statement, connection and database return
// at once, and when the driver returns every object is released exactly
// once (the double's count, at the end of the test).
func TestDoubleAbandonedCall(t *testing.T) {
	d := newDouble(t)
	d.setWait(1500)
	db, cn, st := d.session(t, nil)
	if err := st.SetSqlQuery("wait"); err != nil {
		t.Fatal(err)
	}
	d.fail(t, "StatementCancel", 1, failure{status: adbc.StatusNotImplemented, msg: "no cancel here"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := st.ExecuteQuery(ctx); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, drivermgr.ErrAbandoned) {
		t.Fatalf("ExecuteQuery past its deadline: %v; want context.DeadlineExceeded, ErrAbandoned", err)
	}
	if _, err := cn.NewStatement(); !errors.Is(err, drivermgr.ErrAbandoned) {
		t.Errorf("NewStatement beside the abandoned call: %v", err)
	}
	if n := d.live("statements") - d.base["statements"]; n != 1 {
		t.Errorf("%d statements live during the abandoned call, want 1", n)
	}
	closesAtOnce(t, time.Second, st, cn, db)
	if !settle.Eventually(func() bool { return d.live("databases") == d.base["databases"] }) {
		t.Errorf("the database was not released after the abandoned call came back")
	}
}

// Opens of one database run at once: the driver's connection init (a
// server's connect, for a real one) is not serialized by the manager. The
// double's inits wait until four are in progress together, and fail after
// 5 s if they never are.
func TestDoubleConcurrentOpens(t *testing.T) {
	d := newDouble(t)
	db := d.open(t, nil)
	defer closeAll(t, db)
	const n = 4
	d.setInitGather(n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			cn, err := db.Open(context.Background())
			if err == nil {
				err = cn.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// Connections used from several goroutines at once, each with its own
// statements and readers (run with -race).
func TestDoubleConcurrent(t *testing.T) {
	d := newDouble(t)
	ctx := context.Background()
	db := d.open(t, nil)
	defer closeAll(t, db)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn, err := db.Open(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer cn.Close()
			for i := range 10 {
				st, err := cn.NewStatement()
				if err != nil {
					errs <- err
					return
				}
				n := int64(g*10 + i)
				if err := st.SetSqlQuery(fmt.Sprintf("rows %d batch 3", n)); err != nil {
					errs <- err
				} else if r, _, err := st.ExecuteQuery(ctx); err != nil {
					errs <- err
				} else if vals, _, err := readAll(r); err != nil || !slices.Equal(vals, seq(0, n)) {
					errs <- fmt.Errorf("rows %d: %v, %v", n, vals, err)
				}
				if err := st.Close(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDoubleDatabaseSetOptions: Database.SetOptions keeps connection
// options for the connections opened after it, set on each before its
// init, as arrow-adbc's drivermgr does: the double reads them back; a
// connection opened before has none; an option the driver refuses fails
// the Open, not SetOptions; and after Close it is InvalidState.
func TestDoubleDatabaseSetOptions(t *testing.T) {
	d := newDouble(t)
	ctx := context.Background()
	db := d.open(t, nil)
	defer db.Close()
	before, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if err := db.SetOptions(map[string]string{"k.conn": "v"}); err != nil {
		t.Fatalf("SetOptions: %v", err)
	}
	newOnes := d.calls("ConnectionSetOption")
	after, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if v, err := after.(adbc.GetSetOptions).GetOption("k.conn"); err != nil || v != "v" {
		t.Errorf("a connection opened after SetOptions: k.conn = %q, %v; want v", v, err)
	}
	if n := d.calls("ConnectionSetOption") - newOnes; n != 1 {
		t.Errorf("%d AdbcConnectionSetOption calls for one option", n)
	}
	if _, err := before.(adbc.GetSetOptions).GetOption("k.conn"); err == nil {
		t.Error("a connection opened before SetOptions has its option")
	}
	if err := db.SetOptions(map[string]string{"double.reject": "x"}); err != nil {
		t.Fatalf("SetOptions of an option the driver refuses: %v (the driver hears of it at Open)", err)
	}
	if c, err := db.Open(ctx); err == nil {
		c.Close()
		t.Error("Open with an option the driver refuses succeeded")
	} else if !errors.Is(err, adbcerr.NotImplemented) {
		t.Errorf("Open: %v, want the driver's NotImplemented", err)
	}
	db.Close()
	wantStatus(t, "SetOptions after Close", db.SetOptions(map[string]string{"k": "v"}), adbc.StatusInvalidState)
}
