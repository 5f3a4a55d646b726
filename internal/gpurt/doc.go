// Package gpurt is the CUDA-runtime-shaped API that CUDA and HIP share: one
// binding, one Device/Stream/Event implementation over a per-runtime table.
//
// HIP copies the CUDA runtime API call for call (hipMalloc for cudaMalloc,
// the same error codes, copy kinds and flags), so a runtime is described by
// a Table: its symbol names, the kinds of memory it offers, its constants
// and a few hooks. CUDA's driver API (libcuda) is a Table too, of the
// DriverAPI shape: the same calls under other names, with contexts,
// out-parameter error texts and copies of one direction each; api.go holds
// all that differs. Bind loads the table's functions from a library; a
// Backend tries its Sources (a table and its candidate libraries) in turn,
// binds the first library that serves and probes its devices; Device,
// Stream and Event implement package device over any bound runtime.
//
// No exported signature of a runtime package shows a type of this package:
// each has its own Device type (Table.Wrap) around a *Device, with methods
// that delegate to it and are documented in the runtime's names, written by
// gpurtgen from one table of methods.
//
// Conventions for both runtimes:
//   - The current device is per OS thread: every call sequence runs with
//     its goroutine locked to its thread after a set-device call (the
//     driver API's: its primary context made current).
//   - A nil device.Stream is a per-device stream created at probe, with
//     the runtime's non-blocking flag: it does not serialize with other
//     streams the way the legacy null stream does.
//   - A Stream is usable only with devices of the GPU that made it (any
//     kind of memory of that GPU); others are refused before the runtime
//     sees them.
//   - An Event keeps its handle in C memory, so SyncEvent is a stable
//     cudaEvent_t* or hipEvent_t* (ArrowDeviceArray.sync_event).
//   - A Device is a device.ForeignStreams: streams of its GPU that other
//     code made, named by their handle (0: the legacy default stream), wait
//     for events (StreamWaitEvent), and streams or the host for them (an
//     event of our own recorded on them, or StreamSynchronize).
//   - A failed call is a *device.RuntimeError with the runtime's message.
package gpurt
