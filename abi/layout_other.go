//go:build !arm

package abi

// Schema mirrors struct ArrowSchema.
type Schema struct {
	Format      uintptr // const char*
	Name        uintptr // const char*
	Metadata    uintptr // const char*
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
}
