//go:build windows

package main

import (
	"fmt"
	"syscall"
)

// openLibrary loads a DLL (duckdb.dll) with LoadLibrary.
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
