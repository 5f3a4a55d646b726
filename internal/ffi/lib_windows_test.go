package ffi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A DLL that is not there is told by LoadLibrary's error code, not its
// (localized, and under Wine different) message, and the error names it.
func TestOpenNotFound(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.dll")
	if err := os.WriteFile(broken, []byte("not a PE file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path     string
		notFound bool
	}{
		{filepath.Join(dir, "missing.dll"), true},
		{"cdevice-missing.dll", true},
		{broken, false},
	} {
		_, err := Open(c.path)
		if err == nil || errors.Is(err, ErrLibraryNotFound) != c.notFound || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Open(%s) = %v, want not found %v, naming the library", c.path, err, c.notFound)
		}
	}
}
