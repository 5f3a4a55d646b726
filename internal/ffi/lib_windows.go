//go:build windows

package ffi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// openLibrary loads path with LoadLibraryEx, never through the default
// search, which reaches the current directory: a file name alone is looked
// for in System32 (system) or, by absolute path, in the application's
// folder and PATH's absolute folders; an absolute path's dependencies are
// looked for in its own folder, the application's and System32. The
// process's DLL search settings are left as they are.
func openLibrary(path string, system bool) (uintptr, string, error) {
	switch {
	case !isName(path):
		return loadLibrary(path, windows.LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR|windows.LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)
	case system:
		return loadLibrary(path, windows.LOAD_LIBRARY_SEARCH_SYSTEM32)
	}
	dirs := applicationDirs()
	for _, dir := range dirs {
		p := filepath.Join(dir, path)
		if _, err := os.Stat(p); err == nil {
			return loadLibrary(p, windows.LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR|windows.LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)
		}
	}
	return 0, "", notFound(fmt.Errorf("LoadLibrary %s: not in the application's folder or an absolute folder on PATH (%d folders)", path, len(dirs)))
}

// applicationDirs are the folders a library named without a folder is
// looked for in, in order: the application's (the executable's folder),
// then PATH's absolute entries. Relative and empty entries would resolve
// against the current directory and are passed over.
func applicationDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// LoadLibrary's messages are localized (and Wine's differ from Windows'),
// so a library that is not there is told by the error code.
func loadLibrary(path string, flags uintptr) (uintptr, string, error) {
	h, err := windows.LoadLibraryEx(path, 0, flags)
	if err == nil {
		return uintptr(h), path, nil
	}
	var code windows.Errno
	wrapped := fmt.Errorf("LoadLibrary %s: %w", path, err)
	if errors.As(err, &code) && (code == windows.ERROR_MOD_NOT_FOUND || code == windows.ERROR_FILE_NOT_FOUND || code == windows.ERROR_PATH_NOT_FOUND) {
		return 0, "", notFound(wrapped)
	}
	return 0, "", wrapped
}

func librarySymbol(h uintptr, name string) (uintptr, error) {
	return windows.GetProcAddress(windows.Handle(h), name)
}

func closeLibrary(h uintptr) error { return windows.FreeLibrary(windows.Handle(h)) }
