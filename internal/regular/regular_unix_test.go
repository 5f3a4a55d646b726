//go:build unix

package regular_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/purearrow/cdevice/internal/regular"
	"golang.org/x/sys/unix"
)

// A FIFO nobody writes to, a device, a directory: refused at once with
// ErrNotRegular by Open (whose open would otherwise wait for a writer for
// ever) and by Check; a regular file, also through a link, opens and reads.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "m.toml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	file := filepath.Join(dir, "f.toml")
	if err := os.WriteFile(file, []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l.toml")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, os.DevNull, dir} {
		done := make(chan error, 1)
		go func() {
			f, err := regular.Open(p)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, regular.ErrNotRegular) {
				t.Errorf("Open(%s): %v, want ErrNotRegular", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Open(%s) is still waiting", p)
		}
		if err := regular.Check(p); !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("Check(%s): %v, want ErrNotRegular", p, err)
		}
	}
	for _, p := range []string{file, link} {
		f, err := regular.Open(p)
		if err != nil {
			t.Fatalf("Open(%s): %v", p, err)
		}
		b := make([]byte, 16)
		if n, err := f.Read(b); err != nil || string(b[:n]) != "x = 1\n" {
			t.Errorf("Read(%s): %q, %v", p, b[:n], err)
		}
		f.Close()
		if err := regular.Check(p); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
	}
	if _, err := regular.Open(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of nothing: %v, want fs.ErrNotExist", err)
	}
	if err := regular.Check(filepath.Join(dir, "none")); err != nil {
		t.Errorf("Check of nothing: %v, want nil (the opener says so)", err)
	}
}
