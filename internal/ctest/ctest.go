package ctest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/purearrow/cdevice/internal/ffi"
)

// A build is one compiled and loaded library; built once per process and
// never unloaded, because function pointers from it may outlive any test.
type build struct {
	once sync.Once
	lib  *ffi.Library
	err  error
	skip bool // gcc is missing outside CI
}

var (
	mu     sync.Mutex
	builds = map[string]*build{}
)

// Library compiles testdata/c/<name>.c (relative to the module root) into a
// shared library, once per process, and loads it. Without gcc the test is
// skipped, except when CI is "true": CI installs gcc, so nothing may skip
// there.
func Library(t testing.TB, name string) *ffi.Library {
	t.Helper()
	mu.Lock()
	b := builds[name]
	if b == nil {
		b = &build{}
		builds[name] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.lib, b.skip, b.err = compile(name) })
	switch {
	case b.skip && os.Getenv("CI") != "true":
		t.Skipf("ctest: %v (install gcc to run the C ABI tests)", b.err)
	case b.err != nil:
		t.Fatalf("ctest: %v", b.err)
	}
	return b.lib
}

// Func looks up a symbol of lib and returns a function calling it with
// integer or pointer arguments.
func Func(t testing.TB, lib *ffi.Library, name string) func(args ...uintptr) uintptr {
	t.Helper()
	fn, err := lib.Symbol(name)
	if err != nil {
		t.Fatalf("ctest: %v", err)
	}
	return func(args ...uintptr) uintptr { return ffi.Call(fn, args...) }
}

// Path compiles testdata/c/<name>.c, as Library does, and returns the path
// of the shared library, for code under test that loads a library by path
// (dlopen of the same path then shares one loaded copy with the test). The
// file is named by a hash of the C sources and kept in the temporary
// directory, since the code under test may open it at any time; a second
// run reuses it.
func Path(t testing.TB, name string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		if os.Getenv("CI") != "true" {
			t.Skipf("ctest: gcc not found: %v (install gcc to run the C ABI tests)", err)
		}
		t.Fatalf("ctest: gcc not found: %v", err)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatalf("ctest: %v", err)
	}
	cdir := filepath.Join(root, "testdata", "c")
	src := filepath.Join(cdir, name+".c")
	flags := []string{"-shared", "-fPIC", "-O1", "-g", "-Wall", "-Werror", "-pthread", "-I", cdir}
	// Any source may include any other, so all of them name the build.
	h := sha256.New()
	fmt.Fprintln(h, name, runtime.GOOS, runtime.GOARCH, flags[:7])
	entries, err := os.ReadDir(cdir)
	if err != nil {
		t.Fatalf("ctest: %v", err)
	}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext != ".c" && ext != ".h" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(cdir, e.Name()))
		if err != nil {
			t.Fatalf("ctest: %v", err)
		}
		fmt.Fprintln(h, e.Name(), len(b))
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), "cdevice-ctest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("ctest: %v", err)
	}
	out := filepath.Join(dir, fmt.Sprintf("lib%s-%x%s", name, h.Sum(nil)[:8], sharedSuffix()))
	if _, err := os.Stat(out); err == nil {
		return out
	}
	// Build beside it and rename: test binaries of other packages may be
	// building the same library at the same time.
	tmp, err := os.CreateTemp(dir, "lib"+name+"-*.tmp")
	if err != nil {
		t.Fatalf("ctest: %v", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(gcc, append(flags, "-o", tmp.Name(), src)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ctest: building %s: %v\n%s", src, err, msg)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		if _, serr := os.Stat(out); serr != nil {
			t.Fatalf("ctest: %v", err)
		}
	}
	return out
}

func compile(name string) (lib *ffi.Library, skip bool, err error) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return nil, true, fmt.Errorf("gcc not found: %w", err)
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil, false, err
	}
	cdir := filepath.Join(root, "testdata", "c")
	src := filepath.Join(cdir, name+".c")
	if _, err := os.Stat(src); err != nil {
		return nil, false, err
	}
	dir, err := os.MkdirTemp("", "cdevice-ctest-")
	if err != nil {
		return nil, false, err
	}
	// A loaded library needs no file on Unix; Windows locks it until exit.
	if runtime.GOOS != "windows" {
		defer os.RemoveAll(dir)
	}
	out := filepath.Join(dir, "lib"+name+sharedSuffix())
	cmd := exec.Command(gcc, "-shared", "-fPIC", "-O1", "-g", "-Wall", "-Werror",
		"-I", cdir, "-o", out, src)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, false, fmt.Errorf("building %s: %v\n%s", src, err, msg)
	}
	lib, err = ffi.Open(out)
	if err != nil {
		return nil, false, fmt.Errorf("loading %s: %w", out, err)
	}
	return lib, false, nil
}

// ModuleRoot walks up from the working directory (a test's package
// directory) to the directory holding go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func sharedSuffix() string {
	switch runtime.GOOS {
	case "darwin":
		return ".dylib"
	case "windows":
		return ".dll"
	}
	return ".so"
}
