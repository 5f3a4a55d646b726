//go:build windows

package ffi

import "golang.org/x/sys/windows"

func openLibrary(path string) (uintptr, error) {
	h, err := windows.LoadLibrary(path)
	return uintptr(h), err
}

func librarySymbol(h uintptr, name string) (uintptr, error) {
	return windows.GetProcAddress(windows.Handle(h), name)
}

func closeLibrary(h uintptr) error { return windows.FreeLibrary(windows.Handle(h)) }
