package drivermgr_test

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// A driver that cannot load says what the path is, named as the user
// typed it: a directory, nothing at all, a library built for another
// architecture, one without the default entry points (listing those it
// exports, read from its symbol table, and the option to set).
func TestLoadErrorsSayWhat(t *testing.T) {
	d := newDouble(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "drivers", "some.so"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, driver string
		status       adbc.Status
		want         []string
		not          string
	}{
		{"a directory", filepath.Join(dir, "drivers"), adbc.StatusInvalidArgument, []string{"driver " + filepath.Join(dir, "drivers") + " is a directory"}, "drivers.so"},
		{"a directory with a library's name", filepath.Join(dir, "drivers", "some.so"), adbc.StatusInvalidArgument, []string{"some.so is a directory"}, ""},
		{"nothing there", filepath.Join(dir, "nope"), adbc.StatusNotFound, []string{"driver " + filepath.Join(dir, "nope") + ": no such file"}, ""},
	} {
		_, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": c.driver})
		e := wantStatus(t, c.name, err, c.status)
		for _, w := range c.want {
			if !strings.Contains(e.Msg, w) {
				t.Errorf("%s: %q; want it to say %q", c.name, e.Msg, w)
			}
		}
		if c.not != "" && strings.Contains(e.Msg, c.not) {
			t.Errorf("%s: %q names %s, which the user never typed", c.name, e.Msg, c.not)
		}
	}

	_, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": d.path, "entrypoint": "NoSuchInit"})
	e := wantStatus(t, "a missing entry point", err, adbc.StatusInternal)
	for _, w := range []string{"NoSuchInit", "it exports AdbcDriverDoubleInit, AdbcDriverInit, double_adbc_init", "entrypoint=AdbcDriverDoubleInit"} {
		if !strings.Contains(e.Msg, w) {
			t.Errorf("a missing entry point: %q; want it to say %q", e.Msg, w)
		}
	}

	// The double with its ELF header's machine made another's.
	if f, err := elf.Open(d.path); err != nil {
		t.Logf("the double is no ELF library here (%v): no foreign-architecture case", err)
	} else {
		f.Close()
		b, err := os.ReadFile(d.path)
		if err != nil {
			t.Fatal(err)
		}
		other, arch := elf.EM_AARCH64, "arm64"
		if runtime.GOARCH == "arm64" {
			other, arch = elf.EM_X86_64, "amd64"
		}
		order := binary.ByteOrder(binary.LittleEndian)
		if b[elf.EI_DATA] == byte(elf.ELFDATA2MSB) {
			order = binary.BigEndian
		}
		order.PutUint16(b[18:], uint16(other)) // e_machine
		foreign := filepath.Join(dir, "libforeign.so")
		if err := os.WriteFile(foreign, b, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err = drivermgr.Driver{}.NewDatabase(map[string]string{"driver": foreign})
		e := wantStatus(t, "a foreign library", err, adbc.StatusInvalidArgument)
		if want := "is built for " + arch; !strings.Contains(e.Msg, want) || !strings.Contains(e.Msg, runtime.GOOS+"/"+runtime.GOARCH) {
			t.Errorf("a foreign library: %q; want it to say %q and this program's platform", e.Msg, want)
		}
	}
}
