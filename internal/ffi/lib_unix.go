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
	return 0, fmt.Errorf("dlopen %s: %w", path, err)
}

// errNoReason: dlopen failed and dlerror said nothing.
var errNoReason = errors.New("the loader gave no reason (dlerror returned nothing)")

// noReason is the reason for a failed dlopen of path that dlerror did not
// give: the file's absence when path is a file path that is not there
// (worded as the loaders word it, so that callers tell a missing library
// from a broken one), else errNoReason.
func noReason(path string) error {
	if !strings.Contains(path, "/") {
		return errNoReason // a name the loader searches for
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: cannot open shared object file: No such file or directory (%w)", path, errNoReason)
		}
		return fmt.Errorf("%w; %w", err, errNoReason)
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
