package drivermgr_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/ffi"
)

// BenchmarkSelect1 is the per-query overhead: "SELECT 1" on SQLite (in
// memory), a statement made, run, its result read to the end and released,
// through this manager (Go) and through Arrow's C driver manager by plain
// C (C), same driver, same process:
//
//	go test ./drivermgr -run XXX -bench Select1 -count 5
func BenchmarkSelect1(b *testing.B) {
	drv := sharedADBC(b, "libadbc_driver_sqlite.so")
	b.Run("Go", func(b *testing.B) {
		db := sqliteDB(b, map[string]string{"driver": drv})
		c, err := db.Open(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		for b.Loop() {
			st, err := c.NewStatement()
			if err != nil {
				b.Fatal(err)
			}
			if err := st.SetSqlQuery("SELECT 1"); err != nil {
				b.Fatal(err)
			}
			r, _, err := st.ExecuteQuery(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for r.Next() {
			}
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
			r.Release()
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
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

// coreCInclude is the core module's testdata/c (dl.h).
func coreCInclude(tb testing.TB) string {
	root, err := ctest.ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(root, "..", "testdata", "c")
}
