package cdevice

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them, so
// callers can test with errors.Is.
var (
	// ErrInvalid: a struct from C breaks the interface's rules (null pointer
	// where one is required, wrong buffer or child count for the type,
	// malformed format string or metadata, out-of-range length or offset).
	ErrInvalid = errors.New("cdevice: invalid input")
	// ErrReleased: a struct was already released (or moved from).
	ErrReleased = errors.New("cdevice: struct already released")
	// ErrUnsupported: a valid type or feature this package does not handle.
	ErrUnsupported = errors.New("cdevice: unsupported")
	// ErrNoDevice: the array lives on a device with no loaded backend.
	ErrNoDevice = errors.New("cdevice: no device backend")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
