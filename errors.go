package cdevice

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/internal/errs"
)

// Sentinel errors. Every error this package returns wraps one of them (or,
// from a call given a context, the context's error), so callers can test
// with errors.Is. docs/errors.md lists every package's
// sentinels.
var (
	// ErrInvalid: a struct from C breaks the interface's rules (null pointer
	// where one is required, wrong buffer or child count for the type,
	// malformed format string or metadata, out-of-range length or offset).
	// It is device.ErrInvalid, which devices return for bad arguments.
	ErrInvalid = errs.ErrInvalid
	// ErrReleased: a struct was already released (or moved from), or a
	// device stream or event is used after its Close. It is
	// device.ErrReleased.
	ErrReleased = errs.ErrReleased
	// ErrUnsupported: a valid type or feature this package does not handle.
	ErrUnsupported = errs.ErrUnsupported
	// ErrUnknownDevice: the array lives on a device that no loaded backend
	// owns (no runtime for its device type, or no such device id). It is
	// device.ErrUnknownDevice, so device.Lookup's errors match it too.
	// (device.ErrNoDevice is another failure: a runtime with no device.)
	ErrUnknownDevice = errs.ErrUnknownDevice
	// ErrRuntime: a device runtime call failed (allocation, copy, event,
	// stream); errors.As with a *device.RuntimeError gives the call, the
	// runtime's code and its message. It is device.ErrRuntime. (It also
	// wraps the rare failure of the C heap: no C library, or out of memory.)
	ErrRuntime = errs.ErrRuntime
	// ErrProducer: a producer reported a failure through the interface: a
	// C stream's get_schema or get_next returned an error code, an async
	// producer called on_error or its extract_data failed. The error is a
	// *ProducerError.
	ErrProducer = errs.ErrProducer
)

// A ProducerError is a producer's failure as the C interfaces report it,
// from a stream (package stream) or an async producer (package async).
type ProducerError struct {
	// Call is what failed: "get_schema" or "get_next" of a stream,
	// "on_error" or "extract_data" of an async producer, or "release" when
	// an async producer ended the stream before sending a schema.
	Call string
	// Code is the errno-style code the producer gave (an Errno's value).
	Code int
	// Message is the producer's message: get_last_error's, or on_error's
	// (empty if none).
	Message string
	// Metadata is what an async producer's on_error carried.
	Metadata arrow.Metadata
}

func (e *ProducerError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("cdevice: the producer's %s failed with code %d", e.Call, e.Code)
	}
	return fmt.Sprintf("cdevice: the producer's %s failed with code %d: %s", e.Call, e.Code, e.Message)
}

// Unwrap makes the error match ErrProducer and its code as an Errno (so
// errors.Is(err, syscall.EIO) holds for a producer's EIO on every platform).
func (e *ProducerError) Unwrap() []error { return []error{ErrProducer, Errno(e.Code)} }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
