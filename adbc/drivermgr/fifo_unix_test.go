//go:build unix

package drivermgr_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"golang.org/x/sys/unix"
)

// A manifest, a profile or a driver library that is a FIFO nobody writes
// to is refused at once (InvalidArgument, "not a regular file"), where
// opening it waited for a writer for ever.
func TestFIFOsAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		return p
	}
	m := filepath.Join(dir, "lib.toml")
	if err := os.WriteFile(m, []byte("manifest_version = 1\n[Driver]\nshared = "+`"`+fifo("lib.so")+`"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo("p.toml")
	for _, c := range []struct {
		name string
		opts map[string]string
	}{
		{"manifest", map[string]string{drivermgr.OptionDriver: fifo("m.toml")}},
		{"library named by a manifest", map[string]string{drivermgr.OptionDriver: m}},
		{"library by path", map[string]string{drivermgr.OptionDriver: filepath.Join(dir, "lib.so")}},
		{"profile", map[string]string{drivermgr.OptionProfile: "p", drivermgr.OptionAdditionalProfileSearchPaths: dir}},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				db, err := drivermgr.Driver{}.NewDatabase(c.opts)
				if err == nil {
					db.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				var ae adbc.Error
				if !errors.Is(err, adbcerr.InvalidArgument) || !errors.As(err, &ae) || !strings.Contains(ae.Msg, "not a regular file") {
					t.Errorf("NewDatabase: %v, want InvalidArgument: not a regular file", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("NewDatabase is still waiting on the FIFO")
			}
		})
	}
}
