//go:build !windows

package ffi

import (
	"fmt"

	"github.com/ebitengine/purego"
)

func openLibrary(path string) (uintptr, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return 0, fmt.Errorf("dlopen %s: %w", path, err)
	}
	return h, nil
}

func librarySymbol(h uintptr, name string) (uintptr, error) {
	return purego.Dlsym(h, name)
}

func closeLibrary(h uintptr) error { return purego.Dlclose(h) }
