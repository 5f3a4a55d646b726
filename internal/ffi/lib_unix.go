//go:build !windows

package ffi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// dlerror's message belongs to the OS thread that made the failing call,
// and purego.Dlopen, Dlsym and Dlclose call dlerror in a second call into
// C, between which a goroutine may move to another thread: it would read
// an empty message, or another call's. Each is made with the thread locked.

// openLibrary loads path: absolute, or a file name for the dynamic
// loader's search (the same for a system library: system is Windows').
// A name already loaded is taken as it is (the loader would not search);
// else the search is refused where it would reach the current directory.
func openLibrary(path string, _ bool) (uintptr, string, error) {
	h, err := dlopen(path)
	return h, path, err
}

func dlopen(path string) (uintptr, error) {
	if isName(path) {
		if h, ok := alreadyLoaded(path); ok {
			return h, nil
		}
		if err := searchReachesHere(path); err != nil {
			return 0, err
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err == nil {
		return h, nil
	}
	if strings.TrimSpace(err.Error()) == "" {
		// Not expected with the thread locked; once more, then say why
		// as well as we can without the loader.
		if h, err = purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
			return h, nil
		}
		if strings.TrimSpace(err.Error()) == "" {
			err = noReason(path)
		}
	}
	err = fmt.Errorf("dlopen %s: %w", path, err)
	if notThere(path, err) {
		return 0, notFound(err)
	}
	return 0, err
}

// alreadyLoaded is the handle of name when the process has loaded a
// library of that name already (RTLD_NOLOAD: nothing is searched for,
// nothing new runs).
func alreadyLoaded(name string) (uintptr, bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL|rtldNoload)
	return h, err == nil && h != 0
}

// searchReachesHere refuses name when the loader's search would find it
// through an entry of its path variable (loaderPathEnv) that is empty
// (glibc reads that as the current directory) or relative, before any
// absolute entry that holds it. Such an entry is a common slip
// (LD_LIBRARY_PATH=/opt/x:$LD_LIBRARY_PATH with the variable unset ends in
// an empty one), and it hands the process to whoever can write where it is
// started. A file is looked for in the entry and, as the loader does, in
// its subfolders (glibc-hwcaps/x86-64-v3, tls/x86_64) up to three deep.
func searchReachesHere(name string) error { return searchReaches(name, loaderPath()) }

// searchReaches is searchReachesHere with the loader's path list given.
func searchReaches(name, list string) error {
	if list == "" {
		return nil
	}
	for dir := range strings.SplitSeq(strings.ReplaceAll(list, ";", ":"), ":") {
		if !holds(dir, name) {
			continue
		}
		if filepath.IsAbs(dir) {
			return nil // the loader finds it here first
		}
		where := `"" (the current directory)`
		if dir != "" {
			where = fmt.Sprintf("%q (relative to the current directory)", dir)
		}
		return fmt.Errorf("dlopen %s: %w: %s's entry %s holds one; name the library by absolute path, or remove the entry",
			name, ErrUnsafeLibraryPath, loaderPathEnv, where)
	}
	return nil
}

// holds reports whether the loader could find name in dir or in its
// subfolders up to three deep.
func holds(dir, name string) bool {
	pattern := filepath.Join(dir, escapeGlob(name))
	for range 4 {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return true
		}
		pattern = filepath.Join(filepath.Dir(pattern), "*", filepath.Base(pattern))
	}
	return false
}

// escapeGlob quotes filepath.Match's special characters in s.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// notThere reports whether dlopen failed because the library is not there.
// A file path is looked at; for a name the loader searched for, dlerror's
// message is all there is, and it is in the C locale (a Go program never
// calls setlocale): glibc's and musl's "No such file or directory", macOS's
// "image not found" and "no such file".
func notThere(path string, err error) bool {
	if strings.Contains(path, "/") {
		_, serr := os.Stat(path)
		return errors.Is(serr, os.ErrNotExist)
	}
	msg := err.Error()
	for _, s := range []string{"No such file or directory", "image not found", "no such file"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// errNoReason: dlopen failed and dlerror said nothing.
var errNoReason = errors.New("the loader gave no reason (dlerror returned nothing)")

// noReason is the reason for a failed dlopen of path that dlerror did not
// give: what stat says of a file path, else errNoReason.
func noReason(path string) error {
	if strings.Contains(path, "/") {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%w; %w", err, errNoReason)
		}
	}
	return errNoReason
}

func librarySymbol(h uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(h, name)
}

func closeLibrary(h uintptr) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlclose(h)
}
