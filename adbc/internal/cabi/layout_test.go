package cabi

import (
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// adbcInclude is the directory of adbc.h of ADBC 1.1 (adbctest.Shared).
func adbcInclude(t *testing.T) string {
	t.Helper()
	return filepath.Dir(adbctest.Shared(t, filepath.Join("include", "adbc.h")))
}

// Every field of every struct sits where the C compiler puts it, and every
// struct has C's size.
func TestLayout(t *testing.T) {
	lib, err := ffi.Open(ctest.Build(t, "adbc_layout", ctest.Options{Include: []string{adbcInclude(t)}}))
	if err != nil {
		t.Fatal(err)
	}
	layout := ctest.Func(t, lib, "layout")
	ask := func(name string) uintptr {
		s, err := ffi.CString(name)
		if err != nil {
			t.Fatal(err)
		}
		defer ffi.Free(s)
		v := layout(uintptr(s))
		if v == ^uintptr(0) {
			t.Fatalf("adbc_layout.c does not know %s", name)
		}
		return v
	}
	for _, s := range []struct {
		c   string
		val any
	}{
		{"AdbcError", Error{}}, {"AdbcErrorDetail", ErrorDetail{}}, {"AdbcDatabase", Handle{}},
		{"AdbcConnection", Handle{}}, {"AdbcStatement", Handle{}}, {"AdbcPartitions", Partitions{}},
		{"AdbcDriver", Driver{}},
	} {
		rt := reflect.TypeOf(s.val)
		if c := ask(s.c); c != rt.Size() {
			t.Errorf("sizeof(struct %s) = %d, Go's %s is %d", s.c, c, rt.Name(), rt.Size())
		}
		if s.c == "AdbcConnection" || s.c == "AdbcStatement" {
			continue // the same fields as AdbcDatabase
		}
		for i := range rt.NumField() {
			f := rt.Field(i)
			if c := ask(s.c + "." + f.Name); c != f.Offset {
				t.Errorf("offsetof(%s, %s) = %d, Go's is %d", s.c, f.Name, c, f.Offset)
			}
		}
	}
	if got := unsafe.Offsetof(Driver{}.ErrorGetDetailCount); got != Size100 {
		t.Errorf("1.1's functions start at %d, Size100 is %d", got, Size100)
	}
}
