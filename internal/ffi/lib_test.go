package ffi

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A library that is not there is told from one that is there but does not
// load (by a file path or by a name the loader searches for), by the
// platform's loader (LoadLibrary's error code on Windows, not its
// localized message, which Wine words its own way), and the error names it.
func TestOpenNotFound(t *testing.T) {
	suffix := ".so"
	if runtime.GOOS == "windows" {
		suffix = ".dll"
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken"+suffix)
	if err := os.WriteFile(broken, []byte("not a shared library"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path     string
		notFound bool
	}{
		{filepath.Join(dir, "missing"+suffix), true},
		{"cdevice-missing" + suffix, true},
		{broken, false},
	} {
		_, err := Open(c.path)
		if err == nil || errors.Is(err, ErrLibraryNotFound) != c.notFound || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Open(%s) = %v, want not found %v, naming the library", c.path, err, c.notFound)
		}
	}
}
