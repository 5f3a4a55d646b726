//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A FIFO nobody writes to (whose open waited for ever) and a device
// (/dev/urandom read on and on: it has no size to bound the work) are not
// Arrow files: refused at once, naming what they are.
func TestInspectRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.arrows")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, p := range []string{fifo, "/dev/urandom"} {
		r := runCommand(t, nil, "inspect", p)
		if r.code != 1 || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("inspect %s: exit %d, %q; want a refusal: not a regular file", p, r.code, r.stderr)
		}
	}
}
