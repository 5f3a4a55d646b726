package device

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/errs"
)

// Sentinel errors of the device layer; backends wrap them. Every error a
// Device, Stream, Event or Backend of this module returns wraps one of them
// (or is a context's error, from a call given one).
var (
	// ErrNotFound: the runtime library is not installed (or not where looked).
	ErrNotFound = errs.ErrNotFound
	// ErrNoDevice: the runtime loaded but reports no usable device.
	ErrNoDevice = errs.ErrNoDevice
	// ErrMissingSymbol: the runtime lacks a function we bind (too old).
	ErrMissingSymbol = errs.ErrMissingSymbol
	// ErrRuntime: a runtime call failed; see RuntimeError for the code.
	// (Also the rare failure of C heap memory that a call needs.)
	ErrRuntime = errs.ErrRuntime
	// ErrUnknownDevice: no registered backend owns a (device type, id).
	ErrUnknownDevice = errs.ErrUnknownDevice
	// ErrInvalid: an argument breaks a call's rules: a size that is not
	// positive, an offset or range outside a buffer, a pointer the device
	// did not allocate, a NULL handle or event, a stream of another device
	// or runtime. It is cdevice.ErrInvalid.
	ErrInvalid = errs.ErrInvalid
	// ErrReleased: a stream or event used after its Close. It is
	// cdevice.ErrReleased.
	ErrReleased = errs.ErrReleased
)

// A RuntimeError is a failed runtime call: which call, the runtime's numeric
// code and its own message. It wraps ErrRuntime.
type RuntimeError struct {
	Runtime string // "cuda", "hip", "opencl"
	Call    string // e.g. "cudaMemcpyAsync"
	Code    int
	Message string // the runtime's description of Code, when it has one
}

func (e *RuntimeError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s: %s failed: %s (%d)", e.Runtime, e.Call, e.Message, e.Code)
	}
	return fmt.Sprintf("%s: %s failed with code %d", e.Runtime, e.Call, e.Code)
}

func (e *RuntimeError) Unwrap() error { return ErrRuntime }

// A Pointer is device memory as the runtime names it: a device address for
// CUDA and HIP, an SVM pointer or a cl_mem handle for OpenCL. Host code must
// not dereference it unless the device says its memory is host-accessible.
type Pointer uintptr

// A Device is one device of a runtime. Copies are asynchronous on the given
// stream (nil: the device's default stream); they are ordered on that stream
// and complete once it is synchronized or an event recorded after them is.
// The host memory of a copy must stay untouched until then. Implementations
// are safe for concurrent use.
type Device interface {
	Type() abi.DeviceType
	ID() int64
	Name() string

	// Alloc returns size bytes of device memory (size > 0).
	Alloc(size int) (Pointer, error)
	// Free gives back memory from Alloc.
	Free(p Pointer) error
	// HostAccessible reports whether host code may read and write this
	// device's memory through the pointer itself (CPU, CUDA host and managed
	// memory, OpenCL SVM on a CPU device).
	HostAccessible() bool

	// CopyToDevice copies src to dst+off.
	CopyToDevice(dst Pointer, off int, src []byte, s Stream) error
	// CopyToHost copies len(dst) bytes from src+off.
	CopyToHost(dst []byte, src Pointer, off int, s Stream) error
	// CopyOnDevice copies n bytes from src+srcOff to dst+dstOff.
	CopyOnDevice(dst Pointer, dstOff int, src Pointer, srcOff, n int, s Stream) error

	// NewStream returns a stream of work on this device.
	NewStream() (Stream, error)
	// NewEvent returns an event that can be recorded on this device's streams.
	NewEvent() (Event, error)
	// WaitSyncEvent makes s (nil: the host) wait for the producer's event
	// behind an ArrowDeviceArray.sync_event of this device type (a
	// cudaEvent_t*, hipEvent_t* or cl_event*). A zero syncEvent does nothing.
	// A host wait ends with ctx's error once ctx is done, even if the event
	// never completes; a stream wait does not block the host and ignores ctx.
	WaitSyncEvent(ctx context.Context, syncEvent uintptr, s Stream) error

	// MemoryInfo returns the free and total memory of the device in bytes.
	MemoryInfo() (free, total int64, err error)
}

// ForeignStreams is implemented by devices whose runtime streams can be
// named by a raw handle (cudaStream_t, hipStream_t, cl_command_queue): a
// stream that other code made, such as a consumer's or a producer's in an
// interchange protocol. The handle must be a live stream of the device's
// runtime (for CUDA and HIP, of the device's GPU; 0 is the legacy default
// stream there), or the runtime may crash.
type ForeignStreams interface {
	// WaitForStream makes s (nil: the host) wait for the work queued so far
	// on the runtime stream foreign.
	WaitForStream(foreign uintptr, s Stream) error
	// MakeStreamWait makes the runtime stream foreign wait, without
	// blocking the host, for the event behind syncEvent (as
	// ArrowDeviceArray.sync_event carries it: a cudaEvent_t*, hipEvent_t*
	// or cl_event*). A zero syncEvent does nothing.
	MakeStreamWait(foreign uintptr, syncEvent uintptr) error
}

// A ValueReader is a Device that reads many small values from its memory
// at once: what an import needs to size its buffers (the last offset of a
// string array, a view array's variadic buffer sizes). Over a bus every
// wait costs a round trip, so the reads are queued together and waited for
// once: the CUDA and HIP devices wait for the producer's event on the device
// itself, copy every value into page-locked staging memory (kept per device
// and reused) with one batched copy where the runtime has one, and
// synchronize once; OpenCL queues non-blocking reads behind the event and
// waits once.
type ValueReader interface {
	// ReadValues sets each read's Value to the signed integer of Width
	// bytes (2, 4 or 8, native byte order) at Ptr+Off, once the work behind
	// each of syncEvents (ArrowDeviceArray.sync_event values of this device
	// type; 0 entries: none) is done: the reads of several batches share the
	// one round trip. With a ctx that can be done, the wait for that work
	// happens on the host first and ends with ctx's error once ctx is
	// done; otherwise the device waits, and the host only for the reads.
	// Safe for concurrent use; the staging memory is released when the
	// backend closes.
	ReadValues(ctx context.Context, syncEvents []uintptr, reads []ValueRead) error
}

// A ValueRead is one value a ValueReader reads.
type ValueRead struct {
	Ptr   Pointer
	Off   int64
	Width int   // bytes: 2, 4 or 8
	Value int64 // set by ReadValues
}

// Set sets Value to the signed integer of Width bytes at the start of b,
// in native byte order (b holds at least Width bytes).
func (r *ValueRead) Set(b []byte) {
	switch r.Width {
	case 2:
		r.Value = int64(int16(binary.NativeEndian.Uint16(b)))
	case 4:
		r.Value = int64(int32(binary.NativeEndian.Uint32(b)))
	default:
		r.Value = int64(binary.NativeEndian.Uint64(b))
	}
}

// A Stream orders work on one device.
type Stream interface {
	// Handle is the runtime's stream (cudaStream_t, hipStream_t,
	// cl_command_queue).
	Handle() uintptr
	// Synchronize blocks until all work queued on the stream is done.
	Synchronize() error
	Close() error
}

// An Event marks a point in a stream.
type Event interface {
	// Record marks the point after the work queued on s so far.
	Record(s Stream) error
	// Synchronize blocks until the recorded work is done.
	Synchronize() error
	// SyncEvent returns what ArrowDeviceArray.sync_event carries for this
	// event: a pointer to the runtime's event handle, valid until Close.
	SyncEvent() uintptr
	Close() error
}

// A Backend is one runtime that may offer devices. Probe loads the runtime
// (at most once; later calls return the first answer) and lists its devices,
// or says exactly why it cannot: errors wrap ErrNotFound, ErrNoDevice,
// ErrMissingSymbol or ErrRuntime.
type Backend interface {
	Name() string
	Probe(ctx context.Context) (Info, error)
}

// Info is what a backend's probe found.
type Info struct {
	Library string // path or name of the shared library loaded
	Version string // runtime (and driver) version, as the runtime reports it
	Devices []Device
	// Skipped are the libraries a backend loaded and passed over for a later
	// candidate (a runtime newer than the driver supports, one lacking
	// functions), each "path: why".
	Skipped []string
	// Note says which of a backend's APIs served and why, where it has
	// several (CUDA's driver API, when no CUDA runtime serves or
	// CDEVICE_CUDA_API=driver asks); "" when the preferred one served
	// unasked.
	Note string
}
