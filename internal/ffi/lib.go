package ffi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/purearrow/cdevice/internal/regular"
)

var (
	// ErrSymbolNotFound is returned by Library.Symbol when the library
	// lacks a symbol.
	ErrSymbolNotFound = errors.New("symbol not found")
	// ErrLibraryNotFound is in Open's error when the library is not there
	// (as against there but not loadable: another architecture, a missing
	// dependency), decided by the platform's loader (lib_*.go).
	ErrLibraryNotFound = errors.New("library not found")
)

// ErrUnsafeLibraryPath is in Open's error when the platform's search for a
// library named without a folder would take it from the current directory
// (lib_unix.go: an empty or relative entry of LD_LIBRARY_PATH that holds
// one): whoever can write there would run code in this process.
var ErrUnsafeLibraryPath = errors.New("the library search would load it from the current directory")

// A Library is a shared library loaded into the process.
type Library struct {
	handle uintptr
	path   string
}

// Open loads a library a program installs with it or beside it (a GPU
// toolkit's runtime, a database driver). path is
//   - an absolute path: loaded as given; on Windows the libraries it
//     depends on are looked for in its own folder first, then the
//     application's folder and System32;
//   - a path with a folder that is relative: made absolute against the
//     current directory at this moment, because the caller chose it (an
//     option, an environment variable naming a file);
//   - a file name alone: on Windows, looked for in the application's
//     folder, then each absolute folder on PATH, and loaded from there by
//     absolute path (never from the current directory, never through a
//     relative or empty PATH entry); elsewhere, the dynamic loader's
//     search, refused (ErrUnsafeLibraryPath) where an empty or relative
//     LD_LIBRARY_PATH entry would find it under the current directory.
//
// Its error names path (as given, and as made absolute), and wraps
// ErrLibraryNotFound when the library is not there.
func Open(path string) (*Library, error) { return open(path, false) }

// OpenSystem is Open for a library that the operating system or a device
// driver installs (nvcuda.dll, OpenCL.dll, the C runtime): on Windows a
// file name alone is looked for in System32 only. Elsewhere it is Open.
func OpenSystem(path string) (*Library, error) { return open(path, true) }

func open(path string, system bool) (*Library, error) {
	if path == "" {
		return nil, notFound(errors.New("no library named (an empty path)"))
	}
	if strings.IndexByte(path, 0) >= 0 {
		// C would read it cut at the NUL: another path, maybe a bare name
		// the search finds in the current directory.
		return nil, fmt.Errorf("%q: %w: a library path with a NUL byte", path, ErrUnsafeLibraryPath)
	}
	given := path
	if !isName(path) && !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		path = abs
	}
	if !isName(path) {
		// The loader's open of a FIFO waits for a writer; of a device, reads it.
		if err := regular.Check(path); err != nil {
			return nil, err
		}
	}
	h, found, err := openLibrary(path, system)
	if err != nil && path != given {
		err = fmt.Errorf("%w (given as %s)", err, given)
	}
	if err != nil {
		return nil, err
	}
	return &Library{handle: h, path: found}, nil
}

// isName reports whether path is a file name alone, for the platform's
// search: no folder, and on Windows no drive ("C:x.dll" is relative to
// that drive's current folder).
func isName(path string) bool {
	return filepath.Base(path) == path && filepath.VolumeName(path) == "" && !strings.ContainsRune(path, '/')
}

// Path is the library's path: the absolute path it was found at where
// this package searched for it, else the path or name it was opened with.
func (l *Library) Path() string { return l.path }

// Symbol returns the address of the named symbol.
func (l *Library) Symbol(name string) (uintptr, error) {
	p, err := librarySymbol(l.handle, name)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("%s in %s: %w", name, l.path, ErrSymbolNotFound)
	}
	return p, nil
}

// Close unloads the library. Function pointers taken from it become invalid.
func (l *Library) Close() error { return closeLibrary(l.handle) }

// notFound is err, which says the library is not there, matching
// ErrLibraryNotFound too.
func notFound(err error) error { return notFoundError{err} }

type notFoundError struct{ error }

func (e notFoundError) Unwrap() []error { return []error{e.error, ErrLibraryNotFound} }

// EnvDir is the folder elem... inside the folder the environment variable
// env names, or "" when env is unset, empty or not an absolute path: a
// place to search that comes from the environment (CUDA_PATH,
// CONDA_PREFIX, XDG_CONFIG_HOME) must never resolve against the current
// directory.
func EnvDir(env string, elem ...string) string {
	dir := os.Getenv(env)
	if !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}
