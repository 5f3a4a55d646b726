package cdevice

import (
	"fmt"
	"strings"

	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
)

// Leaks describes what is still held across the C boundary, by kind.
type Leaks struct {
	// Exported objects a consumer still holds (Exports is their sum).
	ExportedSchemas int64 // ArrowSchema trees (ExportSchema, ExportField, and those beside an array)
	ExportedArrays  int64 // ArrowArray and ArrowDeviceArray trees (and async tasks' batches)
	ExportedStreams int64 // ArrowArrayStream and ArrowDeviceArrayStream
	AsyncProducers  int64 // ArrowAsyncProducer structs handed to a C handler
	AsyncHandlers   int64 // ArrowAsyncDeviceStreamHandler structs handed to a C producer
	ExportedTensors int64 // tensors (DLPack) whose deleter has not run

	// Imported objects whose producer's release (or deleter) has not been
	// called (Imports is their sum).
	ImportedArrays  int64 // ArrowArray and ArrowDeviceArray trees
	ImportedStreams int64 // ArrowArrayStream and ArrowDeviceArrayStream
	ImportedTensors int64 // tensors (DLPack) whose deleter has not been called

	DeviceArrays   int64 // DeviceArray and DeviceRecordBatch trees not yet released
	DeviceAllocs   int64 // device memory blocks those trees hold (see also CachedMemory)
	Handles        int   // live private_data handles (every export holds one)
	CAllocations   int64 // C heap blocks not yet freed
	CallbackPanics int64 // callback bodies that panicked (recovered)

	// DoubleReleases counts calls of the release callback of an
	// ArrowSchema or ArrowArray we exported on a struct already released
	// (its release member NULL): a consumer's bug, made harmless (the call
	// does nothing) and counted here. It is a history, not something
	// held, so Zero ignores it.
	DoubleReleases int64

	// StrayDeletes counts calls of the deleter of a DLPack tensor we
	// exported on a tensor whose deleter already ran (or that is not
	// ours): a consumer's bug, made harmless (the call does nothing) and
	// counted here. Like DoubleReleases it is a history, and Zero ignores
	// it.
	StrayDeletes int64
}

// LiveLeaks returns the current counters. At the end of a program (or a test
// binary) that released everything, all of them are zero. With TraceLeaks
// on, LeakSites says where each object still held was made.
func LiveLeaks() Leaks {
	p, _ := ffi.Panics()
	l := Leaks{
		ExportedSchemas: leak.Count(leak.ExportedSchema),
		ExportedArrays:  leak.Count(leak.ExportedArray),
		ExportedStreams: leak.Count(leak.ExportedStream),
		AsyncProducers:  leak.Count(leak.AsyncProducer),
		AsyncHandlers:   leak.Count(leak.AsyncHandler),
		ExportedTensors: leak.Count(leak.ExportedTensor),
		ImportedArrays:  leak.Count(leak.ImportedArray),
		ImportedStreams: leak.Count(leak.ImportedStream),
		ImportedTensors: leak.Count(leak.ImportedTensor),
		DeviceArrays:    leak.Count(leak.DeviceArray),
		DeviceAllocs:    leak.Count(leak.DeviceAlloc),
		Handles:         ffi.LiveHandles(),
		CAllocations:    ffi.LiveAllocations(),
		CallbackPanics:  p,
		DoubleReleases:  leak.DoubleReleases.Load(),
		StrayDeletes:    leak.StrayDLPackDeletes.Load(),
	}
	return l
}

// Exports is every exported object a consumer still holds.
func (l Leaks) Exports() int64 {
	return l.ExportedSchemas + l.ExportedArrays + l.ExportedStreams + l.AsyncProducers + l.AsyncHandlers + l.ExportedTensors
}

// Imports is every imported object whose producer's release (or deleter)
// has not been called.
func (l Leaks) Imports() int64 { return l.ImportedArrays + l.ImportedStreams + l.ImportedTensors }

// Zero reports whether nothing is held and no callback panicked
// (DoubleReleases and StrayDeletes aside).
func (l Leaks) Zero() bool {
	l.DoubleReleases, l.StrayDeletes = 0, 0
	return l == Leaks{}
}

// String names every non-zero counter, e.g. "exported_streams=1 handles=1",
// or says "none".
func (l Leaks) String() string {
	var parts []string
	for _, c := range []struct {
		name string
		n    int64
	}{
		{"exported_schemas", l.ExportedSchemas}, {"exported_arrays", l.ExportedArrays},
		{"exported_streams", l.ExportedStreams}, {"async_producers", l.AsyncProducers},
		{"async_handlers", l.AsyncHandlers}, {"exported_tensors", l.ExportedTensors},
		{"imported_arrays", l.ImportedArrays}, {"imported_streams", l.ImportedStreams},
		{"imported_tensors", l.ImportedTensors}, {"device_arrays", l.DeviceArrays},
		{"device_allocs", l.DeviceAllocs}, {"handles", int64(l.Handles)},
		{"c_allocations", l.CAllocations}, {"callback_panics", l.CallbackPanics},
		{"double_releases", l.DoubleReleases}, {"stray_deletes", l.StrayDeletes},
	} {
		if c.n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", c.name, c.n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// TraceLeaks turns on (or off) recording where each exported, imported and
// device object is made, for LeakSites. It costs a stack capture per
// object: a debugging aid for tests (the project's own test binaries turn
// it on with -cdevice.leaktrace or CDEVICE_LEAK_TRACE=1), not for
// production. Objects made while it is off are counted but have no site.
func TraceLeaks(on bool) { leak.SetTracing(on) }

// LeakSites describes every object still held that was made while
// TraceLeaks was on, oldest first: its kind and the call stack that made
// it.
func LeakSites() []string { return leak.Sites() }
