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
	"slices"
	"strings"
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
		t.Skipf("ctest: %v", b.err)
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
		t.Skipf("ctest: %v", err)
	case err != nil:
		t.Fatalf("ctest: %v", err)
	}
	return path
}

// compile builds testdata/c/<name>.c (and what o adds) into a shared
// library for the test binary's platform (see compiler) and returns its
// path. The file is named by a hash of the C sources and kept in a folder
// of the user's own (cacheDir), since code under test may open it at any
// time; a second run reuses it. skip is true when no compiler can be run; where
// $CDEVICE_CTEST_PREBUILT names a folder, the library is taken from there
// instead (see Prebuild).
func compile(name string, o Options) (path string, skip bool, err error) {
	if dir := os.Getenv(EnvPrebuilt); dir != "" {
		return prebuilt(dir, name, o)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false, err
	}
	return compileFor(host, name, o, "", wd)
}

// compileFor builds the library for platform p into out ("": the cache),
// from the sources of the testdata/c folders between the package folder
// from and the module root.
func compileFor(p platform, name string, o Options, out, from string) (path string, skip bool, err error) {
	gcc, flags, err := p.compiler()
	if err != nil {
		return "", true, err
	}
	cdirs, err := sourceDirsFrom(from)
	if err != nil {
		return "", false, err
	}
	src := ""
	for _, d := range cdirs {
		if _, err := os.Stat(filepath.Join(d, name+".c")); err == nil {
			src = filepath.Join(d, name+".c")
			break
		}
	}
	if src == "" {
		return "", false, fmt.Errorf("no %s.c in %s", name, strings.Join(cdirs, ", "))
	}
	flags = append(flags, p.flags()...)
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
	fmt.Fprintln(h, name, p.goos, p.goarch, gcc, flags, o.Link)
	for _, d := range cdirs {
		if err := hashFiles(h, d, false); err != nil {
			return "", false, err
		}
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
	var dir string
	if out != "" {
		dir = filepath.Dir(out)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", false, err
		}
	} else {
		if dir, err = cacheDir(); err != nil {
			return "", false, err
		}
		out = filepath.Join(dir, fmt.Sprintf("lib%s-%x%s", name, h.Sum(nil)[:8], p.suffix()))
	}
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
	args := flags
	for _, d := range cdirs {
		args = append(args, "-I", d)
	}
	args = append(args, "-o", tmp.Name(), src)
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

// A platform is what a library is built for: a GOOS and GOARCH.
type platform struct{ goos, goarch string }

// host is the platform of this test binary.
var host = platform{runtime.GOOS, runtime.GOARCH}

// crossCompilers are the Debian cross compilers for the platforms a test
// binary may run as on an amd64 Linux host: 386 natively, arm and arm64
// under qemu-user, windows under Wine (mingw-w64). On a host of that
// platform plain gcc builds the same.
var crossCompilers = map[platform]string{
	{"linux", "386"}:     "i686-linux-gnu-gcc",
	{"linux", "arm"}:     "arm-linux-gnueabihf-gcc",
	{"linux", "arm64"}:   "aarch64-linux-gnu-gcc",
	{"windows", "amd64"}: "x86_64-w64-mingw32-gcc",
	{"windows", "386"}:   "i686-w64-mingw32-gcc",
}

// compiler returns the C compiler for p and its own flags: $CC where set
// (a command and its flags), else p's cross compiler where installed, else
// gcc (with -m32 for linux/386, which needs gcc-multilib on amd64).
func (p platform) compiler() (string, []string, error) {
	if cc := strings.Fields(os.Getenv("CC")); len(cc) > 0 {
		path, err := exec.LookPath(cc[0])
		if err != nil {
			return "", nil, fmt.Errorf("$CC: %w", err)
		}
		return path, cc[1:], nil
	}
	if cc, ok := crossCompilers[p]; ok {
		if path, err := exec.LookPath(cc); err == nil {
			return path, nil, nil
		}
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return "", nil, fmt.Errorf("gcc not found (install gcc to run the C ABI tests): %w", err)
	}
	if p.goos == "linux" && p.goarch == "386" {
		return gcc, []string{"-m32"}, nil
	}
	return gcc, nil, nil
}

// flags are every build's: a shared library with threads, warnings as
// errors; position-independent on Unix, and on Windows with the C runtime's
// helpers and winpthreads linked in (a DLL loaded by path finds no DLL
// beside it).
func (p platform) flags() []string {
	f := []string{"-shared", "-O1", "-g", "-Wall", "-Werror", "-pthread"}
	if p.goos == "windows" {
		return append(f, "-static")
	}
	return append(f, "-fPIC")
}

func (p platform) suffix() string {
	switch p.goos {
	case "darwin":
		return ".dylib"
	case "windows":
		return ".dll"
	}
	return ".so"
}

// coreModule is the module whose root ends SourceDirs' walk.
const coreModule = "module github.com/purearrow/cdevice\n"

// SourceDirs are the folders of C test sources, nearest first: every
// testdata/c from the working directory (a test's package directory) up
// to the root of the core module. A library is built from the first that
// holds its source, with all of them as include directories, so the adbc
// packages' C (adbc/testdata/c) reaches the core's headers and the core's
// libraries (planted.c) are built for their tests too.
func SourceDirs() ([]string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return sourceDirsFrom(dir)
}

// sourceDirsFrom is SourceDirs from the package folder dir.
func sourceDirsFrom(dir string) ([]string, error) {
	var dirs []string
	for {
		if c := filepath.Join(dir, "testdata", "c"); isDir(c) {
			dirs = append(dirs, c)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), coreModule) {
			return dirs, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("the core module's go.mod is not above the working directory")
		}
		dir = parent
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
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

// EnvPrebuilt names a folder of libraries built ahead by Prebuild, for a
// test binary that cannot run a compiler where it runs (under Wine, the
// host's mingw-w64 cannot be started from a Windows process).
const EnvPrebuilt = "CDEVICE_CTEST_PREBUILT"

// prebuilt is the library of name in dir, or why there is none (a skip).
// Include directories only find headers, which Prebuild was given; other
// options make another library.
func prebuilt(dir, name string, o Options) (string, bool, error) {
	if len(o.Sources) > 0 || len(o.Define) > 0 || len(o.Flags) > 0 || len(o.Link) > 0 {
		return "", true, fmt.Errorf("%s is built with options, which %s=%s cannot hold", name, EnvPrebuilt, dir)
	}
	path := filepath.Join(dir, "lib"+name+host.suffix())
	if _, err := os.Stat(path); err != nil {
		return "", true, fmt.Errorf("%s was not prebuilt for %s/%s: %w", name, host.goos, host.goarch, err)
	}
	return path, false, nil
}

// Prebuild builds every library that builds for goos/goarch into dir, as
// test binaries of that platform find them through EnvPrebuilt: those of
// SourceDirs, and of every package's testdata/c below the working
// directory (C peers live beside the packages they serve), each built
// from its package's folder. It returns the names of those that do not
// build there, with why. include are the include directories every
// library is built with. Two libraries of one name are an error: the
// prebuilt folder holds one of each.
func Prebuild(dir, goos, goarch string, include []string) (failed map[string]error, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cdirs, err := SourceDirs()
	if err != nil {
		return nil, err
	}
	below, err := packageSourceDirs(wd)
	if err != nil {
		return nil, err
	}
	from := map[string]string{} // library name → its package folder
	var names []string
	for _, d := range append(cdirs, below...) {
		m, err := filepath.Glob(filepath.Join(d, "*.c"))
		if err != nil {
			return nil, err
		}
		pkg := filepath.Dir(filepath.Dir(d))
		if slices.Contains(cdirs, d) {
			pkg = wd
		}
		for _, src := range m {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			if prev, ok := from[name]; ok && prev != pkg {
				return nil, fmt.Errorf("two C peers named %s: in %s and %s", name, prev, pkg)
			}
			if _, ok := from[name]; !ok {
				names = append(names, name)
			}
			from[name] = pkg
		}
	}
	p := platform{goos, goarch}
	failed = map[string]error{}
	for _, name := range names {
		out := filepath.Join(dir, "lib"+name+p.suffix())
		os.Remove(out)
		if _, _, err := compileFor(p, name, Options{Include: include}, out, from[name]); err != nil {
			failed[name] = err
		}
	}
	return failed, nil
}

// packageSourceDirs are the testdata/c folders of the packages below dir,
// in this module (not in a folder with a go.mod of its own).
func packageSourceDirs(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == dir {
			return err
		}
		if n := d.Name(); strings.HasPrefix(n, ".") || n == "testdata" {
			if c := filepath.Join(p, "c"); n == "testdata" && isDir(c) {
				out = append(out, c)
			}
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}
