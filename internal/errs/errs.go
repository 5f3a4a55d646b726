// Package errs declares the sentinel errors of every layer, in a leaf
// that every layer may import: the packages that own them (device, the
// root package cdevice) re-export each under its public name, so one
// sentinel has one value wherever it is matched.
package errs

import "errors"

var (
	// Invalid: input that breaks a rule (device.ErrInvalid, cdevice.ErrInvalid).
	Invalid = errors.New("cdevice: invalid input")
	// Released: a struct, stream or event used after its release
	// (device.ErrReleased, cdevice.ErrReleased).
	Released = errors.New("cdevice: struct already released")
	// Unsupported: a valid type or feature not handled (cdevice.ErrUnsupported).
	Unsupported = errors.New("cdevice: unsupported")
	// Producer: a producer reported a failure (cdevice.ErrProducer).
	Producer = errors.New("cdevice: producer failed")
	// NotFound: a runtime library is not installed (device.ErrNotFound).
	NotFound = errors.New("device: runtime not found")
	// NoDevice: a runtime loaded but reports no usable device (device.ErrNoDevice).
	NoDevice = errors.New("device: no device")
	// MissingSymbol: a runtime lacks a function bound (device.ErrMissingSymbol).
	MissingSymbol = errors.New("device: runtime lacks a required function")
	// Runtime: a runtime call failed (device.ErrRuntime, cdevice.ErrRuntime).
	Runtime = errors.New("device: runtime call failed")
	// UnknownDevice: no loaded backend owns a (device type, id)
	// (device.ErrUnknownDevice, cdevice.ErrUnknownDevice).
	UnknownDevice = errors.New("device: no loaded backend for the device")
)
