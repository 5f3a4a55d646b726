//go:build !windows

package ctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The libraries' folder is refused unless it is a folder of this user's
// that nobody else may write to: another user could otherwise leave a
// library there for a test run to load.
func TestPrivate(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return dir
	}
	if err := private(mk("ok", 0o700)); err != nil {
		t.Errorf("a 0700 folder of ours: %v", err)
	}
	if err := private(mk("shared", 0o777)); err == nil || !strings.Contains(err.Error(), "others may write") {
		t.Errorf("a 0777 folder: %v", err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(mk("target", 0o700), link); err != nil {
		t.Fatal(err)
	}
	if err := private(link); err == nil {
		t.Error("a link to a folder was taken")
	}
	if os.Getuid() == 0 { // root can give a folder away to see it refused
		other := mk("other", 0o700)
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if err := private(other); err == nil || !strings.Contains(err.Error(), "belongs to user 12345") {
			t.Errorf("another user's folder: %v", err)
		}
	}
	dir, err := cacheDir()
	if err != nil || private(dir) != nil {
		t.Errorf("cacheDir() = %s, %v", dir, err)
	}
}
