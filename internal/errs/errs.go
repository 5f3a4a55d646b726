// Package errs declares the sentinel errors of every layer, in a leaf
// that every layer may import: the packages that own them (device, the
// root package cdevice) re-export each under its public name, so one
// sentinel has one value wherever it is matched.
package errs

import "errors"

var (
	// ErrInvalid: input that breaks a rule (device.ErrInvalid, cdevice.ErrInvalid).
	ErrInvalid = errors.New("cdevice: invalid input")
	// ErrReleased: a struct, stream or event used after its release
	// (device.ErrReleased, cdevice.ErrReleased).
	ErrReleased = errors.New("cdevice: struct already released")
	// ErrUnsupported: a valid type or feature not handled (cdevice.ErrUnsupported).
	ErrUnsupported = errors.New("cdevice: unsupported")
	// ErrProducer: a producer reported a failure (cdevice.ErrProducer).
	ErrProducer = errors.New("cdevice: producer failed")
	// ErrNotFound: a runtime library is not installed (device.ErrNotFound).
	ErrNotFound = errors.New("device: runtime not found")
	// ErrNoDevice: a runtime loaded but reports no usable device (device.ErrNoDevice).
	ErrNoDevice = errors.New("device: no device")
	// ErrMissingSymbol: a runtime lacks a function bound (device.ErrMissingSymbol).
	ErrMissingSymbol = errors.New("device: runtime lacks a required function")
	// ErrRuntime: a runtime call failed (device.ErrRuntime, cdevice.ErrRuntime).
	ErrRuntime = errors.New("device: runtime call failed")
	// ErrUnknownDevice: no loaded backend owns a (device type, id)
	// (device.ErrUnknownDevice, cdevice.ErrUnknownDevice).
	ErrUnknownDevice = errors.New("device: no loaded backend for the device")
)
