//go:build !windows

package ffi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// dlerror's message belongs to the OS thread that made the failing call,
// and purego.Dlopen, Dlsym and Dlclose call dlerror in a second call into
// C, between which a goroutine may move to another thread: it would read
// an empty message, or another call's. Each is made with the thread locked.

func openLibrary(path string) (uintptr, error) {
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
