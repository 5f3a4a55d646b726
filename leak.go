package cdevice

import (
	"fmt"
	"sync/atomic"

	"github.com/purearrow/cdevice/internal/ffi"
)

var liveExports, liveImports atomic.Int64

// doubleReleases counts release calls on exported structs already released.
var doubleReleases atomic.Int64

// Leaks describes what is still held across the C boundary.
type Leaks struct {
	Exports        int64 // exported structs whose release has not run
	Imports        int64 // imported structs whose producer release has not been called
	DeviceArrays   int64 // DeviceArray and DeviceRecordBatch trees not yet released
	DeviceAllocs   int64 // device memory blocks those trees hold (see also CachedMemory)
	Handles        int   // live private_data handles
	CAllocations   int64 // C heap blocks not yet freed
	CallbackPanics int64 // callback bodies that panicked (recovered)

	// DoubleReleases counts calls of the release callback of an
	// ArrowSchema or ArrowArray we exported on a struct already released
	// (its release member NULL): a consumer's bug, made harmless (the call
	// does nothing) and counted here. It is a history, not something
	// held, so Zero ignores it.
	DoubleReleases int64
}

// LiveLeaks returns the current counters. At the end of a program (or a test
// binary) that released everything, all of them are zero.
func LiveLeaks() Leaks {
	p, _ := ffi.Panics()
	return Leaks{
		Exports:        liveExports.Load(),
		Imports:        liveImports.Load(),
		DeviceArrays:   liveDeviceArrays.Load(),
		DeviceAllocs:   liveDeviceAllocs.Load(),
		Handles:        ffi.LiveHandles(),
		CAllocations:   ffi.LiveAllocations(),
		CallbackPanics: p,
		DoubleReleases: doubleReleases.Load(),
	}
}

// Zero reports whether nothing is held and no callback panicked
// (DoubleReleases aside).
func (l Leaks) Zero() bool {
	l.DoubleReleases = 0
	return l == Leaks{}
}

func (l Leaks) String() string {
	return fmt.Sprintf("exports=%d imports=%d device_arrays=%d device_allocs=%d handles=%d c_allocations=%d callback_panics=%d double_releases=%d",
		l.Exports, l.Imports, l.DeviceArrays, l.DeviceAllocs, l.Handles, l.CAllocations, l.CallbackPanics, l.DoubleReleases)
}
