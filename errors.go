package cdevice

import (
	"errors"
	"fmt"

	"github.com/purearrow/cdevice/device"
)

// Sentinel errors. Every error this package returns wraps one of them (or,
// from a call given a context, the context's error), so callers can test
// with errors.Is. The README's error table lists every package's
// sentinels.
var (
	// ErrInvalid: a struct from C breaks the interface's rules (null pointer
	// where one is required, wrong buffer or child count for the type,
	// malformed format string or metadata, out-of-range length or offset).
	// It is device.ErrInvalid, which devices return for bad arguments.
	ErrInvalid = device.ErrInvalid
	// ErrReleased: a struct was already released (or moved from), or a
	// device stream or event is used after its Close. It is
	// device.ErrReleased.
	ErrReleased = device.ErrReleased
	// ErrUnsupported: a valid type or feature this package does not handle.
	ErrUnsupported = errors.New("cdevice: unsupported")
	// ErrNoDevice: the array lives on a device that no loaded backend owns
	// (no runtime for its device type, or no such device id). It is
	// device.ErrUnknownDevice, so device.Lookup's errors match it too.
	ErrNoDevice = device.ErrUnknownDevice
	// ErrRuntime: a device runtime call failed (allocation, copy, event,
	// stream); errors.As with a *device.RuntimeError gives the call, the
	// runtime's code and its message. It is device.ErrRuntime. (It also
	// wraps the rare failure of the C heap: no C library, or out of memory.)
	ErrRuntime = device.ErrRuntime
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
