//go:build arm

package abi

import "unsafe"

// On 32-bit ARM the C ABI aligns int64 to 8 bytes and Go to 4, so these two
// structs carry C's padding explicitly (a Go alignment marker would need
// sync/atomic's noCopy types, which vet rightly refuses to see copied).

// Schema mirrors struct ArrowSchema.
type Schema struct {
	Format      uintptr // const char*
	Name        uintptr // const char*
	Metadata    uintptr // const char*
	_           [4]byte
	Flags       int64
	NChildren   int64
	Children    uintptr // struct ArrowSchema**
	Dictionary  uintptr // struct ArrowSchema*
	Release     uintptr // void (*)(struct ArrowSchema*)
	PrivateData uintptr // void*
}

// Array mirrors struct ArrowArray.
type Array struct {
	Length      int64
	NullCount   int64
	Offset      int64
	NBuffers    int64
	NChildren   int64
	Buffers     uintptr // const void**
	Children    uintptr // struct ArrowArray**
	Dictionary  uintptr // struct ArrowArray*
	Release     uintptr // void (*)(struct ArrowArray*)
	PrivateData uintptr // void*
	_           [4]byte
}

// Compile-time checks of the armv7hf sizes (layout_test.go checks every offset).
var (
	_ [48 - unsafe.Sizeof(Schema{})]struct{}
	_ [unsafe.Sizeof(Schema{}) - 48]struct{}
	_ [64 - unsafe.Sizeof(Array{})]struct{}
	_ [unsafe.Sizeof(Array{}) - 64]struct{}
	_ [104 - unsafe.Sizeof(DeviceArray{})]struct{}
	_ [unsafe.Sizeof(DeviceArray{}) - 104]struct{}
)
