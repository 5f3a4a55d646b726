//go:build windows

package ffi

import (
	"errors"
	"fmt"

	"golang.org/x/sys/windows"
)

// LoadLibrary's messages are localized (and Wine's differ from Windows'),
// so a library that is not there is told by the error code.
func openLibrary(path string) (uintptr, error) {
	h, err := windows.LoadLibrary(path)
	if err == nil {
		return uintptr(h), nil
	}
	var code windows.Errno
	wrapped := fmt.Errorf("LoadLibrary %s: %w", path, err)
	if errors.As(err, &code) && (code == windows.ERROR_MOD_NOT_FOUND || code == windows.ERROR_FILE_NOT_FOUND || code == windows.ERROR_PATH_NOT_FOUND) {
		return 0, notFound(wrapped)
	}
	return 0, wrapped
}

func librarySymbol(h uintptr, name string) (uintptr, error) {
	return windows.GetProcAddress(windows.Handle(h), name)
}

func closeLibrary(h uintptr) error { return windows.FreeLibrary(windows.Handle(h)) }
