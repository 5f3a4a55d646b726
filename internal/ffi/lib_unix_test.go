//go:build !windows

package ffi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// dlerror keeps its message per OS thread, so a goroutine that moved to
// another thread between a failed dlopen and its dlerror read nothing (an
// empty reason: "dlopen libcudart.so.11.0: ") or another call's reason.
// Many goroutines open missing and unloadable libraries at once, under
// scheduling pressure; every error must give its own, non-empty reason.
func TestOpenConcurrentFailuresGiveTheirReason(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	dir := t.TempDir()
	// A deep existing directory makes each lookup, and so each dlopen,
	// long enough for the scheduler to move goroutines between threads.
	deep := dir
	for i := range 40 {
		deep = filepath.Join(deep, fmt.Sprint("d", i))
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 8 {
		notELF := filepath.Join(deep, fmt.Sprintf("notelf%d.so", i))
		if err := os.WriteFile(notELF, []byte(strings.Repeat("not a shared library\n", 100)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths,
			notELF,
			filepath.Join(deep, fmt.Sprintf("missing%d.so", i)),
			fmt.Sprintf("libcdevice-missing-%d.so.1", i), // searched for by the loader
		)
	}

	const goroutines, rounds = 32, 150
	stop := make(chan struct{})
	var spin sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		spin.Add(1)
		go func() { // keeps every P busy, so that threads in C lose theirs
			defer spin.Done()
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
	}
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				p := paths[(g+r)%len(paths)]
				lib, err := Open(p)
				if err == nil {
					lib.Close()
					t.Errorf("Open(%s) succeeded", p)
					return
				}
				if msg := reasonOK(p, err.Error()); msg != "" && bad.Add(1) <= 5 {
					t.Errorf("Open(%s): %q: %s", p, err, msg)
				}
				if r%8 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	spin.Wait()
	if n := bad.Load(); n > 0 {
		t.Errorf("%d of %d failed opens gave no reason or another's", n, goroutines*rounds)
	}
}

// reasonOK returns what is wrong with the error text of a failed Open of
// path, or "".
func reasonOK(path, text string) string {
	prefix := "dlopen " + path + ": "
	reason, ok := strings.CutPrefix(text, prefix)
	switch {
	case !ok:
		return "does not start with " + prefix
	case strings.TrimSpace(reason) == "":
		return "empty reason"
	case runtime.GOOS == "linux" && !strings.Contains(reason, filepath.Base(path)):
		// glibc and musl name the file in the message: another name is
		// another call's message.
		return "the reason is not about " + filepath.Base(path)
	}
	return ""
}

// A failed dlsym has its reason read on its own thread too: it must not
// be left behind for a later dlopen on that thread to report.
func TestSymbolFailuresDoNotLeakReasons(t *testing.T) {
	lib, err := Open(CLibrary)
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 100 {
				if g%2 == 0 {
					if _, err := lib.Symbol("cdevice_no_such_symbol"); err == nil {
						t.Error("Symbol found a missing symbol")
						return
					}
					continue
				}
				p := filepath.Join(dir, fmt.Sprintf("missing-%d-%d.so", g, r))
				_, err := Open(p)
				if err == nil {
					t.Errorf("Open(%s) succeeded", p)
					return
				}
				if msg := reasonOK(p, err.Error()); msg != "" {
					t.Errorf("Open(%s): %q: %s", p, err, msg)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// When dlerror says nothing, the reason still says something: stat's
// answer for a file path that is not there.
func TestNoReason(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present.so")
	if err := os.WriteFile(present, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.so"), "missing.so: no such file or directory"},
		{present, "no reason"},
		{"libcdevice-missing.so.1", "no reason"},
	} {
		err := noReason(c.path)
		if !errors.Is(err, errNoReason) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("noReason(%s) = %v, want %q in it", c.path, err, c.want)
		}
	}
}

// A library named without a folder is refused when the loader's path list
// would find it through an empty entry (glibc: the current directory) or a
// relative one, before any absolute entry that holds it; the loader looks
// in an entry's subfolders too (glibc-hwcaps/x86-64-v3).
func TestSearchReachesCurrentDirectory(t *testing.T) {
	abs := t.TempDir()
	t.Chdir(t.TempDir())
	const name = "libcdevice-planted.so.1"
	for _, f := range []string{name, "rel/glibc-hwcaps/x86-64-v3/" + name, "deep/a/b/c/d/" + name, "lib[x].so", filepath.Join(abs, name)} {
		if !filepath.IsAbs(f) {
			f = filepath.Join(".", f)
		}
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, list string
		unsafe     bool
	}{
		{name, "", false},
		{name, ":", true},
		{name, "/nonexistent:", true},
		{name, "rel", true},
		{name, "./rel", true},
		{name, abs, false},
		{name, abs + ":", false},
		{name, ":" + abs, true},
		{name, "deep", false}, // four folders down: beyond the loader's subfolders
		{name, "nothing-here:/nonexistent", false},
		{"lib[x].so", ".", true},
		{"libcdevice-missing.so", ":rel:.", false},
	} {
		err := searchReaches(c.name, c.list)
		if errors.Is(err, ErrUnsafeLibraryPath) != c.unsafe || (err != nil) != c.unsafe {
			t.Errorf("%s with %q: %v, want refused %v", c.name, c.list, err, c.unsafe)
		}
		if err != nil && (!strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), loaderPathEnv)) {
			t.Errorf("%s with %q: %v names neither the library nor %s", c.name, c.list, err, loaderPathEnv)
		}
	}
}
