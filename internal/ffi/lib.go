package ffi

import (
	"errors"
	"fmt"
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

// A Library is a shared library loaded into the process.
type Library struct {
	handle uintptr
	path   string
}

// Open loads the shared library at path (a file path or a name the system
// loader searches for). Its error names path, and wraps ErrLibraryNotFound
// when the library is not there.
func Open(path string) (*Library, error) {
	h, err := openLibrary(path)
	if err != nil {
		return nil, err
	}
	return &Library{handle: h, path: path}, nil
}

// Path is the name the library was opened with.
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
