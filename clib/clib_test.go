package clib_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/purearrow/cdevice/clib"
)

// A library that is not there is ErrNotFound; a directory is refused.
// (internal/ffi's tests plant libraries where a search must not look.)
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "libnothere.so")
	if _, err := clib.Open(missing); !errors.Is(err, clib.ErrNotFound) {
		t.Errorf("Open(%s): %v, want ErrNotFound", missing, err)
	}
	if _, err := clib.Open(dir); err == nil {
		t.Errorf("Open of a directory succeeded")
	}
}

// The C library itself: found, and its symbols looked up.
func TestSymbol(t *testing.T) {
	libc := map[string]string{"linux": "libc.so.6", "darwin": "/usr/lib/libSystem.B.dylib", "windows": "msvcrt.dll"}[runtime.GOOS]
	if libc == "" {
		t.Skipf("no C library known for %s", runtime.GOOS)
	}
	lib, err := clib.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := lib.Symbol("strlen"); err != nil || p == 0 {
		t.Errorf("Symbol(strlen) = %#x, %v", p, err)
	}
	if _, err := lib.Symbol("no_such_symbol_here"); !errors.Is(err, clib.ErrSymbolNotFound) {
		t.Errorf("Symbol of nothing: %v, want ErrSymbolNotFound", err)
	}
	if lib.Path() == "" {
		t.Error("no Path")
	}
}
