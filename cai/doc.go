// Package cai is the CUDA Array Interface (version 3) of cdevice: the
// descriptor that Numba, CuPy, PyTorch and RAPIDS use to describe CUDA
// memory (Python's __cuda_array_interface__), as a Go type with the exact
// JSON form of that dictionary, and its conversion to and from
// cdevice.DeviceArray.
//
// It owns: the descriptor (Interface) and its rules (Validate, StreamKind),
// its JSON form (MarshalJSON, UnmarshalJSON), the typestr ↔ Arrow type
// mapping (ArrowType, Typestr), Export (DeviceArray → descriptor), Import
// (descriptor → DeviceArray). N-D arrays are Arrow's canonical
// arrow.fixed_shape_tensor extension type (package tensor).
//
// # Types
//
//	Arrow (DeviceArray)                 CAI                         copy?
//	int8 int16 int32 int64              |i1 <i2 <i4 <i8 (1-D)       zero-copy
//	uint8 uint16 uint32 uint64          |u1 <u2 <u4 <u8             zero-copy
//	float16 float32 float64             <f2 <f4 <f8                 zero-copy
//	timestamp[s|ms|us|ns] (no zone)     <M8[s|ms|us|ns]             zero-copy
//	duration[s|ms|us|ns]                <m8[s|ms|us|ns]             zero-copy
//	boolean                             |b1                         bits ↔ bytes: copied
//	arrow.bool8 (export only)           |b1                         zero-copy
//	fixed_size_list<T, k>               2-D (n, k)                  zero-copy
//	fixed_size_list<fsl<T, k>, j> ...   3-D and more (export)       zero-copy
//	arrow.fixed_shape_tensor            N-D (n, logical shape...)   zero-copy; a permutation is strides
//	validity bitmaps                    mask (|b1, same shape)      copied
//	other strides (import)              —                           copied with WithAllowCopy, else refused
//
// '<' is '>' on a big-endian host: data of the other byte order is refused,
// as are complex numbers, strings, objects and structured types. Import
// makes a 1-D array a primitive array, a 2-D array a fixed_size_list and an
// N-D array a fixed_shape_tensor.
//
// # Devices
//
// The interface describes CUDA memory only: arrays on devices other than
// CUDA, CUDA_HOST and CUDA_MANAGED are refused with ErrNotCUDA. A
// descriptor names no device: Import reads it as memory of cuda:0 unless
// WithDevice names another (it cannot check that the pointer is that
// device's memory).
//
// # Streams
//
// Export: DeviceArrays of this module are complete when handed out, and
// Export waits for its own copies, so Stream is nil unless the caller
// says, with WithStream, that its own work on the array is still queued on
// a stream: then Stream is that stream's handle.
//
// Import: stream 0 is refused; with any other Stream the host waits for
// the work queued on it (cudaStreamSynchronize) before Import returns, or
// WithConsumerStream makes a stream of the caller's wait for it instead
// (an event recorded on the producer's stream, cudaStreamWaitEvent), or
// WithIgnoreStream skips it. Stream 1 (legacy default) is the runtime's NULL
// stream; stream 2 (per-thread default) is cudaStreamPerThread of the OS
// thread that Import happens to run on, which is the producer's only when
// the producer ran on that thread: a Go caller of per-thread C code should
// hold runtime.LockOSThread across both, or synchronize itself. The waits
// go through the device's runtime (device.ForeignStreams: the devices of
// device/cuda implement it); a device without it cannot wait for a
// producer's stream, and a descriptor with a Stream is refused there
// unless WithIgnoreStream.
//
// # Memory
//
// A descriptor owns nothing. Export's result (Exported) holds a reference
// to the array and owns the copies it made (mask, boolean bytes) until its
// Release; Import's array keeps the owner passed with WithOwner and the
// copies Import made until its last Release.
package cai
