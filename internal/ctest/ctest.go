package ctest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	b.once.Do(func() {
		var path string
		if path, b.skip, b.err = compile(name, Options{}); b.err == nil {
			b.lib, b.err = ffi.Open(path)
		}
	})
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

// InitRuntime calls lib's int init(const char *path) with the path of a
// runtime library the Go side loaded (libOpenCL, say), so that the C peer
// dlopen's the same copy, and fails t unless it returns 0.
func InitRuntime(t testing.TB, lib *ffi.Library, init, path string) {
	t.Helper()
	p, err := ffi.CString(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ffi.Free(p)
	if rc := int32(Func(t, lib, init)(uintptr(p))); rc != 0 {
		t.Fatalf("%s(%s) = %d", init, path, rc)
	}
}

// Path compiles testdata/c/<name>.c, as Library does, and returns the path
// of the shared library, for code under test that loads a library by path
// (dlopen of the same path then shares one loaded copy with the test).
func Path(t testing.TB, name string) string {
	t.Helper()
	return Build(t, name, Options{})
}

// Options build a library from more than testdata/c/<name>.c: a C peer
// written by others (nanoarrow, say) compiled with our harness.
type Options struct {
	Sources []string // more C sources, compiled into the library
	Include []string // include directories, searched before testdata/c
	Define  []string // macros: NAME or NAME=VALUE
	Flags   []string // more compiler flags, after ours
	Link    []string // what to link: library paths, or -L and -l flags
}

// Build compiles testdata/c/<name>.c with what o adds, as Path does, and
// returns the library's path.
func Build(t testing.TB, name string, o Options) string {
	t.Helper()
	path, skip, err := compile(name, o)
	switch {
	case skip && os.Getenv("CI") != "true":
		t.Skipf("ctest: %v (install gcc to run the C ABI tests)", err)
	case err != nil:
		t.Fatalf("ctest: %v", err)
	}
	return path
}

// compile builds testdata/c/<name>.c (and what o adds) into a shared
// library for the test binary's architecture (see compiler) and returns
// its path. The file is named by a hash of the C sources and kept in the
// temporary directory, since code under test may open it at any time; a
// second run reuses it. skip is true when gcc is missing.
func compile(name string, o Options) (path string, skip bool, err error) {
	gcc, flags, err := compiler()
	if err != nil {
		return "", true, err
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", false, err
	}
	cdir := filepath.Join(root, "testdata", "c")
	src := filepath.Join(cdir, name+".c")
	flags = append(flags, "-shared", "-fPIC", "-O1", "-g", "-Wall", "-Werror", "-pthread")
	flags = append(flags, o.Flags...)
	for _, d := range o.Define {
		flags = append(flags, "-D"+d)
	}
	for _, d := range o.Include {
		flags = append(flags, "-I", d)
	}
	// Any source may include any other, so all of them name the build,
	// with every file of the extra include directories.
	h := sha256.New()
	fmt.Fprintln(h, name, runtime.GOOS, runtime.GOARCH, gcc, flags, o.Link)
	if err := hashFiles(h, cdir, false); err != nil {
		return "", false, err
	}
	for _, d := range o.Include {
		if err := hashFiles(h, d, true); err != nil {
			return "", false, err
		}
	}
	for _, f := range o.Sources {
		if err := hashFile(h, f, filepath.Base(f)); err != nil {
			return "", false, err
		}
	}
	dir := filepath.Join(os.TempDir(), "cdevice-ctest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	out := filepath.Join(dir, fmt.Sprintf("lib%s-%x%s", name, h.Sum(nil)[:8], sharedSuffix()))
	if _, err := os.Stat(out); err == nil {
		return out, false, nil
	}
	// Build beside it and rename: test binaries of other packages may be
	// building the same library at the same time.
	tmp, err := os.CreateTemp(dir, "lib"+name+"-*.tmp")
	if err != nil {
		return "", false, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := append(flags, "-I", cdir, "-o", tmp.Name(), src)
	args = append(append(args, o.Sources...), o.Link...)
	if msg, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		return "", false, fmt.Errorf("building %s: %v\n%s", src, err, msg)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		if _, serr := os.Stat(out); serr != nil {
			return "", false, err
		}
	}
	return out, false, nil
}

// hashFiles writes the C sources and headers of dir into h, named by
// their paths below dir (so a copy elsewhere hashes the same); into its
// subdirectories too where deep.
func hashFiles(h io.Writer, dir string, deep bool) error {
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && path != dir && !deep:
			return filepath.SkipDir
		case e.IsDir():
			return nil
		}
		if ext := filepath.Ext(path); ext != ".c" && ext != ".h" {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		return hashFile(h, path, rel)
	})
}

func hashFile(h io.Writer, path, name string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(h, filepath.ToSlash(name), len(b))
	_, err = h.Write(b)
	return err
}

// crossCompilers are the Debian cross compilers for the targets a test
// binary may run as on an amd64 host (386 natively, arm and arm64 under
// qemu-user). On a host of that architecture plain gcc builds the same.
var crossCompilers = map[string]string{
	"386":   "i686-linux-gnu-gcc",
	"arm":   "arm-linux-gnueabihf-gcc",
	"arm64": "aarch64-linux-gnu-gcc",
}

// compiler returns the C compiler for the test binary's architecture and
// its flags: the cross compiler where it is installed, else gcc (with -m32
// for 386, which needs gcc-multilib on amd64).
func compiler() (string, []string, error) {
	if cc, ok := crossCompilers[runtime.GOARCH]; ok {
		if path, err := exec.LookPath(cc); err == nil {
			return path, nil, nil
		}
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return "", nil, fmt.Errorf("gcc not found: %w", err)
	}
	if runtime.GOARCH == "386" {
		return gcc, []string{"-m32"}, nil
	}
	return gcc, nil, nil
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
