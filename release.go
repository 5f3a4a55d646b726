package cdevice

import (
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// The Release functions release a struct that a Go program holds without
// importing it: one a C library filled and nobody consumed, or a moved-out
// child. Each calls the struct's release callback once when it is set and
// does nothing for nil or a released struct (release NULL). A struct that
// this module exported (package cdevice, stream or async) is released by
// calling its Go release directly, without a round trip through C.
//
// Importing a struct (ImportArray, stream.ImportReader, ...) takes it over:
// do not release an imported struct as well.

// ReleaseSchema releases s and, through its release callback, its children
// and dictionary.
func ReleaseSchema(s *abi.Schema) { releaseSchemaIn(s, nil) }

// ReleaseArray releases a and, through its release callback, its children
// and dictionary.
func ReleaseArray(a *abi.Array) { releaseArrayIn(a, nil) }

// ReleaseDeviceArray releases the array of d (a DeviceArray's release is its
// Array's). It does not touch d's sync event, which belongs to the array.
func ReleaseDeviceArray(d *abi.DeviceArray) {
	if d != nil {
		releaseArrayIn(&d.Array, nil)
	}
}

// ReleaseArrayStream releases s. A stream's release marks it released
// (release NULL) as the C Stream Interface requires.
func ReleaseArrayStream(s *abi.ArrayStream) {
	if s != nil && s.Release != 0 {
		ffi.Call1(s.Release, uintptr(unsafe.Pointer(s)))
	}
}

// ReleaseDeviceArrayStream releases s, as ReleaseArrayStream does.
func ReleaseDeviceArrayStream(s *abi.DeviceArrayStream) {
	if s != nil && s.Release != 0 {
		ffi.Call1(s.Release, uintptr(unsafe.Pointer(s)))
	}
}

// ReleaseAsyncHandler releases h, a handler no producer was given (a
// producer releases the handler it was given when it is done). The Async
// interface does not ask a handler's release to set release to NULL, and a
// handler's release may free h itself (ours does), so ReleaseAsyncHandler
// sets h.Release to NULL before it calls the release: a second call does
// nothing. An abi.AsyncProducer and an abi.AsyncTask have no release.
func ReleaseAsyncHandler(h *abi.AsyncDeviceStreamHandler) {
	if h == nil || h.Release == 0 {
		return
	}
	fn := h.Release
	h.Release = 0
	ffi.Call1(fn, uintptr(unsafe.Pointer(h)))
}

// releaseSchemaIn releases s once: a schema we exported by calling our
// release directly (parent, when not nil, is the export s belongs to), a
// foreign one through its C release.
func releaseSchemaIn(s *abi.Schema, parent *export) {
	switch {
	case s == nil || s.Release == 0:
	case schemaReleaseCB.Is(s.Release):
		releaseExportedSchema(s, parent)
	default:
		ffi.Call1(s.Release, uintptr(unsafe.Pointer(s)))
	}
}

// releaseArrayIn is releaseSchemaIn for an ArrowArray.
func releaseArrayIn(a *abi.Array, parent *export) {
	switch {
	case a == nil || a.Release == 0:
	case arrayReleaseCB.Is(a.Release):
		releaseExportedArray(a, parent)
	default:
		ffi.Call1(a.Release, uintptr(unsafe.Pointer(a)))
	}
}
