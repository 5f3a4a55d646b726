//go:build windows

package main

import (
	"fmt"
	"syscall"
)

// libraryNames: conda-forge ships gdal.dll; OSGeo4W and GISInternals name
// it after the version (gdal310.dll, ...), so pass -lib there.
var libraryNames = []string{"gdal.dll"}

// openLibrary loads a DLL with LoadLibrary; purego calls functions in it
// by address.
func openLibrary(name string) (uintptr, error) {
	h, err := syscall.LoadLibrary(name)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", name, err)
	}
	return uintptr(h), nil
}

// lookup is the address of the C function name in lib.
func lookup(lib uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(lib), name)
}
