//go:build cgo

// The Go driver this test builds is a cgo program (-buildmode=c-shared),
// so the test is one of the cgo test files; CI runs it in its race step.

package drivermgr_test

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// A Go program written as an ADBC driver (arrow-adbc's go/adbc/pkg/<name>,
// built with -buildmode=c-shared), built here at test time under the
// module path such drivers have.
const goDriverSource = `package main

import "C"

//export AdbcDriverInit
func AdbcDriverInit(version C.int, driver, err *C.char) C.uchar { return 0 }

func main() {}
`

// A driver built with Go is refused before it is loaded (its Go runtime
// cannot share our process: loading it would crash), with an error that
// says so and names the Go package to import instead.
func TestGoBuiltDriverRefused(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("builds its c-shared driver for linux/amd64 only (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	gobin, err := osexec.LookPath("go")
	testsupport.Need(t, "the go command (to build a c-shared driver)", err)
	_, err = osexec.LookPath("gcc")
	testsupport.Need(t, "gcc (cgo, to build a c-shared driver)", err)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/arrow-adbc/go/adbc/pkg/flightsql\n\ngo 1.25\n",
		"main.go": goDriverSource,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib := filepath.Join(dir, "libadbc_driver_flightsql.so")
	cmd := osexec.Command(gobin, "build", "-buildmode=c-shared", "-o", lib, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go driver: %v\n%s", err, out)
	}
	_, err = drivermgr.Driver{}.NewDatabase(map[string]string{"driver": lib})
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument || !errors.Is(err, drivermgr.ErrLoad) {
		t.Fatalf("%v: want an InvalidArgument adbc.Error wrapping ErrLoad", err)
	}
	for _, want := range []string{lib, "built with Go", "example.com/arrow-adbc/go/adbc/driver/flightsql"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
}
