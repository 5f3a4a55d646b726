package gpurttest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// Tests of finding the library: absent, unloadable, or not the runtime.

// The C library loads but has none of the runtime's functions: every one
// is named, the device count first, never a panic.
func testNotTheRuntime(t *testing.T, rt Runtime) {
	info, err := rt.backend(ffi.CLibrary).Probe(context.Background())
	want := "lacks " + rt.sym(gpurt.GetDeviceCount) + ", " + rt.sym(gpurt.SetDevice)
	if !errors.Is(err, device.ErrMissingSymbol) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Probe: %v; want ErrMissingSymbol naming %s", err, want)
	}
	// Where a name is looked for by absolute path (Windows), the library
	// is reported by the path it was found at.
	if !strings.Contains(err.Error(), rt.Table.Kinds[0].Alloc) || filepath.Base(info.Library) != filepath.Base(ffi.CLibrary) {
		t.Errorf("error %q does not name every missing function; info %+v", err, info)
	}
}

func testNotFound(t *testing.T, rt Runtime) {
	missing := filepath.Join(t.TempDir(), "lib"+rt.Table.Name+".so.404")
	_, err := rt.backend(missing).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing library: %v", err)
	}
	if _, err := rt.backend().Probe(context.Background()); !errors.Is(err, device.ErrNotFound) {
		t.Errorf("no candidates: %v", err)
	}
}

// A library that exists but does not load is named with the reason; one
// that is absent is only listed.
func testNotFoundBroken(t *testing.T, rt Runtime) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "lib"+rt.Table.Name+".so.12")
	if err := os.WriteFile(bad, []byte("not a shared library"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "lib"+rt.Table.Name+".so.13")
	_, err := rt.backend(missing, bad).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) {
		t.Fatal(err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "tried "+missing+", "+bad) || !strings.Contains(msg, "cannot load") || strings.Count(msg, missing) != 1 {
		t.Errorf("message %q", msg)
	}
}

// The library named by the environment is the only one tried; concurrent
// probes wait for the one probe and get its answer, in one line.
func testExplicitLibraryMissing(t *testing.T, rt Runtime) {
	t.Setenv(rt.Table.EnvLibrary, "/nonexistent/lib"+rt.Table.Name+".so")
	live := ffi.LiveAllocations()
	b := gpurt.NewBackend(false, rt.Table.Source(func() []string {
		t.Error("the platform's libraries were searched")
		return nil
	}))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = b.Probe(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, device.ErrNotFound) {
			t.Fatalf("Probe: %v; want ErrNotFound", err)
		}
		if err != errs[0] {
			t.Errorf("concurrent probes gave different answers: %v, %v", err, errs[0])
		}
	}
	msg := errs[0].Error()
	for _, want := range []string{"not installed", rt.Table.EnvLibrary + "=/nonexistent/lib" + rt.Table.Name + ".so"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line", msg)
	}
	if n := ffi.LiveAllocations(); n != live {
		t.Errorf("C allocations %d -> %d", live, n)
	}
}

// A file that exists but cannot load (here a 32-bit libc in a 64-bit
// process) is reported as such, not as "not installed".
func testExplicitLibraryUnloadable(t *testing.T, rt Runtime) {
	const lib32 = "/lib32/libc.so.6"
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs a 64-bit Linux process")
	}
	if _, err := os.Stat(lib32); err != nil {
		t.Skipf("%s: %v (libc6-i386 provides it)", lib32, err)
	}
	t.Setenv(rt.Table.EnvLibrary, lib32)
	_, err := gpurt.NewBackend(false, rt.Table.Source(func() []string { return nil })).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), "cannot load it") || !strings.Contains(err.Error(), "ELF") {
		t.Fatalf("Probe: %v; want ErrNotFound saying it cannot load the file, and why", err)
	}
}
