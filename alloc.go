package cdevice

import (
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// Struct is the set of C interface structs that New allocates (abi.Struct).
type Struct = abi.Struct

// New returns a zeroed T in C heap memory: a struct that C may fill, read and
// keep after a call returns, which Go memory must not be unless pinned. Give
// it back with Free. New panics if the C heap is exhausted, as new does when
// the Go heap is.
func New[T Struct]() *T {
	var zero T
	p, err := ffi.Calloc(unsafe.Sizeof(zero))
	if err != nil {
		panic(err)
	}
	return (*T)(p)
}

// Free gives back a struct from New. It does not call the struct's release:
// release it first (importing it does) or its producer's resources leak.
// Free(nil) does nothing.
func Free[T Struct](p *T) {
	ffi.Free(unsafe.Pointer(p))
}
