//go:build !windows

package main

import "github.com/ebitengine/purego"

// openLibrary loads a shared library with dlopen; dlerror's message names
// the library.
func openLibrary(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// lookup is the address of the C function name in lib.
func lookup(lib uintptr, name string) (uintptr, error) {
	return purego.Dlsym(lib, name)
}
