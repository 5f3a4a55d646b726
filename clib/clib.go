// Package clib loads a C library for a program to call with purego, the
// way this module loads its own runtimes and drivers: never from the
// current directory, where whoever can write would run code in the
// process. Bind its functions with purego.RegisterFunc on the addresses
// Symbol returns.
//
//	lib, err := clib.Open("/usr/lib/x86_64-linux-gnu/libgdal.so.32")
//	...
//	var version func(*byte) *byte
//	sym, err := lib.Symbol("GDALVersionInfo")
//	...
//	purego.RegisterFunc(&version, sym)
package clib

import "github.com/purearrow/cdevice/internal/ffi"

var (
	// ErrNotFound is in Open's error when the library is not there (as
	// against there but not loadable: another architecture, a missing
	// dependency).
	ErrNotFound = ffi.ErrLibraryNotFound
	// ErrUnsafePath is in Open's error when the platform's search for a
	// library named without a folder would take it from the current
	// directory (an empty or relative LD_LIBRARY_PATH entry).
	ErrUnsafePath = ffi.ErrUnsafeLibraryPath
	// ErrSymbolNotFound is in Symbol's error when the library lacks the
	// symbol.
	ErrSymbolNotFound = ffi.ErrSymbolNotFound
)

// A Library is a shared library loaded into the process. It stays loaded:
// functions bound from it may be called at any time.
type Library struct{ l *ffi.Library }

// Open loads the library at path: an absolute path as given (on Windows
// its dependencies looked for in its own folder first); a relative path
// with a folder made absolute against the current directory now (the
// caller chose it); a file name alone found by the platform's search, but
// never in the current directory (on Windows, the application's folder
// and the absolute folders on PATH). Its error names path and wraps
// ErrNotFound or ErrUnsafePath where they say why; a path that is not a
// regular file (a FIFO, a directory) is refused without waiting.
func Open(path string) (*Library, error) {
	l, err := ffi.Open(path)
	if err != nil {
		return nil, err
	}
	return &Library{l}, nil
}

// Path is where the library was found (the absolute path where it was
// searched for), else the path or name it was opened with.
func (l *Library) Path() string { return l.l.Path() }

// Symbol returns the address of the named function or variable.
func (l *Library) Symbol(name string) (uintptr, error) { return l.l.Symbol(name) }
