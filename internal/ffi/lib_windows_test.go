//go:build windows

package ffi_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// A DLL named without a folder is never loaded from the current directory
// nor through a relative or empty PATH entry (Windows' own search would):
// Open looks in the application's folder and PATH's absolute folders,
// OpenSystem in System32. A DLL that runs code as it is loaded
// (testdata/c/planted.c) tells which copies were.
func TestOpenNeverSearchesCurrentDirectory(t *testing.T) {
	const a, b, s = "cdevice_planted_a.dll", "cdevice_planted_b.dll", "cdevice_planted_s.dll"
	here, abs, marks := t.TempDir(), t.TempDir(), t.TempDir()
	ctest.Plant(t, here, a, b, s)
	ctest.Plant(t, filepath.Join(here, "rel"), a, b, s)
	ctest.Plant(t, abs, b)
	ctest.PlantSystem32(t, s)
	t.Setenv(ctest.PlantedMarks, marks)
	t.Setenv("PATH", strings.Join([]string{"", "rel", ".", "", os.Getenv("PATH")}, ";"))
	t.Chdir(here)

	for _, open := range []func(string) (*ffi.Library, error){ffi.Open, ffi.OpenSystem} {
		if _, err := open(a); !errors.Is(err, ffi.ErrLibraryNotFound) {
			t.Errorf("%s, in the current directory and relative PATH entries only: %v; want not found", a, err)
		}
	}
	if got := ctest.Loaded(t, marks); len(got) > 0 {
		t.Fatalf("loaded from the current directory or a relative PATH entry: %v", got)
	}

	t.Setenv("PATH", abs+";"+os.Getenv("PATH"))
	// A DLL that is loaded answers any later load of its name, and cannot
	// be deleted: each is closed before the next load and the clean-up.
	if _, err := ffi.OpenSystem(b); !errors.Is(err, ffi.ErrLibraryNotFound) {
		t.Errorf("OpenSystem(%s), not in System32: %v; want not found", b, err)
	}
	lib, err := ffi.Open(b)
	if err != nil || !strings.EqualFold(lib.Path(), filepath.Join(abs, b)) {
		t.Errorf("%s in an absolute PATH folder: %v, %v", b, lib, err)
	}
	if err == nil {
		lib.Close()
	}
	if lib, err := ffi.OpenSystem(s); err != nil {
		t.Errorf("OpenSystem(%s) in System32: %v", s, err)
	} else {
		lib.Close()
	}
	if got := ctest.Loaded(t, marks); !slices.Equal(got, []string{b, s}) {
		t.Errorf("loaded %v, want %s from the absolute PATH folder and %s from System32", got, b, s)
	}
}

// A relative path with a folder is the caller's choice: made absolute
// against the current directory at the call.
func TestOpenRelativePath(t *testing.T) {
	here, marks := t.TempDir(), t.TempDir()
	ctest.Plant(t, filepath.Join(here, "sub"), "cdevice_planted_r.dll")
	t.Setenv(ctest.PlantedMarks, marks)
	t.Chdir(here)
	lib, err := ffi.Open(`sub\cdevice_planted_r.dll`)
	if err != nil || !strings.EqualFold(lib.Path(), filepath.Join(here, "sub", "cdevice_planted_r.dll")) {
		t.Fatalf("Open(sub\\cdevice_planted_r.dll) = %v, %v", lib, err)
	}
	lib.Close()
	if got := ctest.Loaded(t, marks); !slices.Equal(got, []string{"cdevice_planted_r.dll"}) {
		t.Errorf("loaded %v", got)
	}
}
