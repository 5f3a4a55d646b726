package cdevice_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

var namedErrnos = []struct {
	name string
	code cdevice.Errno
	goes error // this platform's syscall.Errno of the condition
}{
	{"EPERM", cdevice.EPERM, syscall.EPERM},
	{"ENOENT", cdevice.ENOENT, syscall.ENOENT},
	{"EIO", cdevice.EIO, syscall.EIO},
	{"EAGAIN", cdevice.EAGAIN, syscall.EAGAIN},
	{"ENOMEM", cdevice.ENOMEM, syscall.ENOMEM},
	{"EACCES", cdevice.EACCES, syscall.EACCES},
	{"EBUSY", cdevice.EBUSY, syscall.EBUSY},
	{"ENODEV", cdevice.ENODEV, syscall.ENODEV},
	{"EINVAL", cdevice.EINVAL, syscall.EINVAL},
	{"ENOSPC", cdevice.ENOSPC, syscall.ENOSPC},
	{"EPIPE", cdevice.EPIPE, syscall.EPIPE},
	{"ENOSYS", cdevice.ENOSYS, syscall.ENOSYS},
	{"EOVERFLOW", cdevice.EOVERFLOW, syscall.EOVERFLOW},
	{"ENOTSUP", cdevice.ENOTSUP, syscall.ENOTSUP},
	{"ECANCELED", cdevice.ECANCELED, syscall.ECANCELED},
	{"ETIMEDOUT", cdevice.ETIMEDOUT, syscall.ETIMEDOUT},
}

// Every named Errno is the value the C compiler's errno.h gives that name
// on this platform (Windows' C runtimes number ECANCELED 105, Linux 125).
func TestErrnoIsTheCRuntimes(t *testing.T) {
	value := ctest.Func(t, ctest.Library(t, "errno_peer"), "errno_value")
	for _, c := range namedErrnos {
		name, err := ffi.CString(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := int32(value(uintptr(name))); got != int32(c.code) {
			t.Errorf("%s: errno.h says %d, cdevice.%s is %d", c.name, got, c.name, int32(c.code))
		}
		ffi.Free(name)
	}
}

// An Errno reads the same everywhere and matches the natural Go error of
// its condition: the platform's syscall.Errno (an invented value on
// Windows), through errors.Is and errors.As.
func TestErrnoMatchesGoErrors(t *testing.T) {
	for _, c := range namedErrnos {
		err := fmt.Errorf("wrapped: %w", c.code)
		if !errors.Is(err, c.goes) {
			t.Errorf("%s does not match %v", c.name, c.goes)
		}
		var se syscall.Errno
		if !errors.As(err, &se) || se != c.goes {
			t.Errorf("%s: errors.As found syscall.Errno %d, want %d", c.name, se, c.goes)
		}
		if got := cdevice.ErrnoOf(c.goes); got != c.code {
			t.Errorf("ErrnoOf(syscall.%s) = %d, want %d", c.name, got, c.code)
		}
	}
	for _, c := range []struct {
		code cdevice.Errno
		goes error
		text string
	}{
		{cdevice.EIO, syscall.EIO, "input/output error (EIO)"},
		{cdevice.ECANCELED, context.Canceled, "operation canceled (ECANCELED)"},
		{cdevice.ETIMEDOUT, context.DeadlineExceeded, "connection timed out (ETIMEDOUT)"},
		{cdevice.ENOSYS, errors.ErrUnsupported, "function not implemented (ENOSYS)"},
		{cdevice.ENOTSUP, errors.ErrUnsupported, "operation not supported (ENOTSUP)"},
		{cdevice.EACCES, fs.ErrPermission, "permission denied (EACCES)"},
		{cdevice.ENOENT, fs.ErrNotExist, "no such file or directory (ENOENT)"},
	} {
		if !errors.Is(c.code, c.goes) || c.code.Error() != c.text {
			t.Errorf("%d: %q, matches %v: %v", int32(c.code), c.code.Error(), c.goes, errors.Is(c.code, c.goes))
		}
	}
	if errors.Is(cdevice.EIO, syscall.EINVAL) || errors.Is(cdevice.Errno(9999), syscall.EIO) {
		t.Error("an Errno matches another condition")
	}
	if got := cdevice.Errno(9999).Error(); got != "errno 9999" {
		t.Errorf("an unnamed code reads %q", got)
	}
}

// The code a C consumer gets for a Go error.
func TestErrnoOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want cdevice.Errno
	}{
		{fmt.Errorf("wrapped: %w", syscall.ENOSPC), cdevice.ENOSPC},
		{fmt.Errorf("wrapped: %w", cdevice.EAGAIN), cdevice.EAGAIN},
		{fmt.Errorf("%w: bad", cdevice.ErrInvalid), cdevice.EINVAL},
		{fmt.Errorf("read: %w", context.Canceled), cdevice.ECANCELED},
		{context.DeadlineExceeded, cdevice.ECANCELED},
		{errors.New("anything else"), cdevice.EIO},
		{&cdevice.ProducerError{Call: "get_next", Code: int(cdevice.ENOMEM)}, cdevice.ENOMEM},
	} {
		if got := cdevice.ErrnoOf(c.err); got != c.want {
			t.Errorf("ErrnoOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// A producer's code is an Errno in its error's chain.
func TestProducerErrorErrno(t *testing.T) {
	err := fmt.Errorf("reading: %w", &cdevice.ProducerError{Call: "get_next", Code: int(cdevice.EIO), Message: "disk"})
	var e cdevice.Errno
	if !errors.Is(err, cdevice.ErrProducer) || !errors.Is(err, syscall.EIO) || !errors.As(err, &e) || e != cdevice.EIO {
		t.Errorf("%v: ErrProducer %v, syscall.EIO %v, Errno %d", err, errors.Is(err, cdevice.ErrProducer), errors.Is(err, syscall.EIO), e)
	}
}

// docs/errors.md's errno table gives each name this platform's value (Linux,
// macOS and Windows columns).
func TestREADMEErrnoTable(t *testing.T) {
	column := map[string]int{"linux": 1, "darwin": 2, "windows": 3}[runtime.GOOS]
	if column == 0 {
		t.Skipf("docs/errors.md's errno table has no %s column", runtime.GOOS)
	}
	readme, err := os.ReadFile(filepath.Join("docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	value := map[string]int32{}
	for _, c := range namedErrnos {
		value[c.name] = int32(c.code)
	}
	seen := 0
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `E") || len(cells) < 4 {
			continue
		}
		names := strings.Split(strings.TrimPrefix(cells[0], "| "), ", ")
		values := strings.Split(cells[column], ", ")
		if len(names) != len(values) {
			t.Fatalf("docs/errors.md row %q: %d names, %d values", line, len(names), len(values))
		}
		for i, n := range names {
			n = strings.Trim(n, "`")
			want, ok := value[n]
			if got, err := strconv.Atoi(values[i]); !ok || err != nil || int32(got) != want {
				t.Errorf("docs/errors.md says %s is %s on %s; cdevice.%s is %d", n, values[i], runtime.GOOS, n, want)
			}
			seen++
		}
	}
	if seen != len(namedErrnos) {
		t.Errorf("docs/errors.md's errno table has %d names, cdevice %d", seen, len(namedErrnos))
	}
}
