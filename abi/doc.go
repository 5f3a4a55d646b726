// Package abi holds Go mirrors of the C structs of the Arrow C Data, Stream,
// Device and Async Device Stream interfaces, with their constants.
//
// It owns layout only. Every field has the C name in CamelCase and sits at the
// offset the C compiler gives it on each supported architecture (asserted by
// layout_test.go against gcc's answers). Pointer fields are uintptr: the memory they
// point at belongs to C (or is pinned Go memory), so the Go garbage collector
// must not look at it. The accessor methods (Child, Buffer, At) turn them into
// Go pointers for reading; Pointer does it for any other field (a format or
// name string, private_data) without the conversion go vet's unsafeptr check
// reports.
//
// A struct that C may keep after a call returns must not live on the Go heap
// unless it is pinned; the cdevice package offers off-heap allocation for that
// (cdevice.New and cdevice.Free).
//
// On 32-bit ARM, C aligns Schema, Array and DeviceArray to 8 bytes and Go to
// 4 (sizes and offsets agree: the structs carry C's padding). Hand C structs
// from cdevice.New or from the Go heap, which align them to 8, not ones in
// Go stack variables or inside other Go structs.
package abi
