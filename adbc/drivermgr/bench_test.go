package drivermgr_test

import (
	"context"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// BenchmarkSelect1 is the per-query overhead: "SELECT 1" on SQLite (in
// memory), a statement made, run, its result read to the end and released,
// through this manager (Go), through Arrow's C driver manager by plain C
// (C), and the same C calls as C's made from Go through purego, with
// nothing else (purego: the floor of any Go caller without cgo), or with
// the result imported into arrow-go by the bridge (puregoImport: what Go
// costs above it is this manager's own); same driver, same process:
//
//	go test ./drivermgr -run XXX -bench Select1 -count 5
func BenchmarkSelect1(b *testing.B) {
	drv := sharedADBC(b, "libadbc_driver_sqlite.so")
	b.Run("Go", func(b *testing.B) {
		c := select1Conn(b, drv)
		for b.Loop() {
			select1(b, c)
		}
	})
	b.Run("purego", func(b *testing.B) { select1Purego(b, drv, false) })
	b.Run("puregoImport", func(b *testing.B) { select1Purego(b, drv, true) })
	b.Run("C", func(b *testing.B) {
		lib, err := ffi.Open(ctest.Build(b, "adbc_select1", ctest.Options{Include: []string{adbcInclude(b), coreCInclude(b)}}))
		if err != nil {
			b.Fatal(err)
		}
		mgr, d := cstr(b, sharedADBC(b, "libadbc_driver_manager.so")), cstr(b, drv)
		if rc := ctest.Func(b, lib, "s1_open")(mgr, d); rc != 0 {
			b.Fatalf("s1_open: step %d failed", rc)
		}
		defer ctest.Func(b, lib, "s1_close")()
		run := ctest.Func(b, lib, "s1_run")
		for b.Loop() {
			if int32(run(1)) != 0 {
				b.Fatal("s1_run failed")
			}
		}
	})
}

// select1Conn is a connection of drv's default database (as the C side's),
// closed with tb.
func select1Conn(tb testing.TB, drv string) adbc.Connection {
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": drv})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	c, err := db.Open(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// select1 runs SELECT 1 on c, reads its result to the end and releases
// it.
func select1(tb testing.TB, c adbc.Connection) {
	st, err := c.NewStatement()
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.SetSqlQuery("SELECT 1"); err != nil {
		tb.Fatal(err)
	}
	r, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		tb.Fatal(err)
	}
	r.Release()
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}

// select1Allocs is what SELECT 1 may allocate on the Go heap: one
// allocation a foreign call (purego keeps the arguments of each; the
// floor's 10 calls, the same as ours, allocate 10 times), the result's
// arrow-go objects and the import's (7), the statement, its execution and
// its reader (3), and the stream reader's cleanup (2), kept for callers
// of the stream package that drop a reader unreleased.
const select1Allocs = 22

// TestSelect1Allocations holds the Go work of a query to its budget where
// CI can see it (a benchmark's time is not checked): no closure, no
// argument slice, no state of a call allocated beyond select1Allocs.
func TestSelect1Allocations(t *testing.T) {
	if testsupport.RaceEnabled() {
		t.Skip("the race detector allocates for its own bookkeeping")
	}
	c := select1Conn(t, sharedADBC(t, "libadbc_driver_sqlite.so"))
	n := testing.AllocsPerRun(200, func() { select1(t, c) })
	t.Logf("SELECT 1: %v allocations", n)
	if n > select1Allocs {
		t.Errorf("SELECT 1 allocates %v times, more than %d", n, select1Allocs)
	}
}

// select1Purego runs the C side's calls (adbc_select1.c's s1_run) from Go,
// each one purego call: Arrow's C driver manager's, then the stream's and
// its structs' callbacks. The result is released unread, or, with imp,
// imported (its schema and batches) and released.
func select1Purego(b *testing.B, drv string, imp bool) {
	lib, err := ffi.Open(sharedADBC(b, "libadbc_driver_manager.so"))
	if err != nil {
		b.Fatal(err)
	}
	sym := func(name string) uintptr {
		p, err := lib.Symbol(name)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	mem := func(n uintptr) uintptr {
		p, err := ffi.Calloc(n)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ffi.Free(p) })
		return uintptr(p)
	}
	e := mem(unsafe.Sizeof(cabi.Error{}))
	ok := func(what string, st uintptr) {
		if uint8(st) != 0 {
			b.Fatalf("%s: status %d: %s", what, uint8(st), ffi.GoString((*cabi.Error)(abi.Pointer(e)).Message))
		}
	}
	db, conn := mem(unsafe.Sizeof(cabi.Handle{})), mem(unsafe.Sizeof(cabi.Handle{}))
	ok("AdbcDatabaseNew", ffi.Call(sym("AdbcDatabaseNew"), db, e))
	ok("AdbcDatabaseSetOption", ffi.Call(sym("AdbcDatabaseSetOption"), db, cstr(b, "driver"), cstr(b, drv), e))
	ok("AdbcDatabaseInit", ffi.Call(sym("AdbcDatabaseInit"), db, e))
	ok("AdbcConnectionNew", ffi.Call(sym("AdbcConnectionNew"), conn, e))
	ok("AdbcConnectionInit", ffi.Call(sym("AdbcConnectionInit"), conn, db, e))
	b.Cleanup(func() {
		ffi.Call(sym("AdbcConnectionRelease"), conn, e)
		ffi.Call(sym("AdbcDatabaseRelease"), db, e)
	})
	stNew, stQuery, stExec, stRelease := sym("AdbcStatementNew"), sym("AdbcStatementSetSqlQuery"),
		sym("AdbcStatementExecuteQuery"), sym("AdbcStatementRelease")
	query := cstr(b, "SELECT 1")
	st, rows := mem(unsafe.Sizeof(cabi.Handle{})), mem(8)
	sp, scp, ap := mem(unsafe.Sizeof(abi.ArrayStream{})), mem(unsafe.Sizeof(abi.Schema{})), mem(unsafe.Sizeof(abi.Array{}))
	s, a := (*abi.ArrayStream)(abi.Pointer(sp)), (*abi.Array)(abi.Pointer(ap))
	for b.Loop() {
		ok("AdbcStatementNew", ffi.Call(stNew, conn, st, e))
		ok("AdbcStatementSetSqlQuery", ffi.Call(stQuery, st, query, e))
		ok("AdbcStatementExecuteQuery", ffi.Call(stExec, st, sp, rows, e))
		ok("get_schema", ffi.Call(s.GetSchema, sp, scp))
		var sc *arrow.Schema
		if imp {
			var err error
			if sc, err = cdevice.ImportSchema((*abi.Schema)(abi.Pointer(scp))); err != nil {
				b.Fatal(err)
			}
		} else {
			ffi.Call((*abi.Schema)(abi.Pointer(scp)).Release, scp)
		}
		for {
			ok("get_next", ffi.Call(s.GetNext, sp, ap))
			if a.Release == 0 {
				break
			}
			if imp {
				rb, err := cdevice.ImportRecordBatchWithSchema(a, sc)
				if err != nil {
					b.Fatal(err)
				}
				rb.Release()
			} else {
				ffi.Call(a.Release, ap)
			}
		}
		ffi.Call(s.Release, sp)
		ok("AdbcStatementRelease", ffi.Call(stRelease, st, e))
	}
}

func cstr(tb testing.TB, s string) uintptr {
	p, err := ffi.CString(s)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ffi.Free(p) })
	return uintptr(p)
}

// adbcInclude is the directory of ADBC's adbc.h (../shared/adbc/include).
func adbcInclude(tb testing.TB) string {
	return filepath.Dir(sharedADBC(tb, filepath.Join("include", "adbc.h")))
}

// coreCInclude is the module's testdata/c (dl.h).
func coreCInclude(tb testing.TB) string {
	root, err := ctest.ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(root, "testdata", "c")
}
