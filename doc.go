// Package cdevice is a pure-Go (cgo-free) implementation of the Apache Arrow
// C Data Interface and C Device Data Interface for arrow-go.
//
// It exports arrow-go arrays, record batches and schemas into the C structs of
// package abi, and imports such structs produced by C, C++, Rust or Go into
// arrow-go values. Both directions are zero-copy: an export points C at the
// Go buffers (pinned until C releases them), an import wraps the foreign
// buffers and calls the producer's release exactly once, when the last
// arrow-go reference goes.
//
// What C hands over is checked before anything is built from it, and bad
// input is an error wrapping ErrInvalid, never a panic: an import refuses
// a tree nested deeper than 64 levels (or a cycle), a schema of more than
// 65,536 nodes or 64 MiB of formats, names and metadata (both counted at
// every visit of a shared child), and buffers or children too short for
// what indexes them.
//
// Structs handed to C are usually allocated by the consumer; when Go is the
// consumer or must hand C a struct to fill and keep, allocate it off the Go
// heap with New and give it back with Free.
//
// # Packages
//
// This package is the bridge; the rest of the family lives beside it:
//
//   - abi: the C structs as Go structs, device types and flags (layout only)
//   - stream: ArrowArrayStream and ArrowDeviceArrayStream, both directions
//   - async: the async device stream (handler, task, producer), both directions
//   - dlpack, cai: DLPack and the CUDA Array Interface
//   - tensor: the canonical fixed-shape tensor extension type
//   - cdata: arrow-go's arrow/cdata API without cgo
//   - device, device/cuda, device/hip, device/opencl: the Device interface
//     and one runtime per package, loaded at run time
//   - loader: which runtimes this machine has, and the default device
//   - adbc/drivermgr, adbc/sqldriver, adbc/adbcerr: ADBC without cgo
//   - clib: loading a C library for a program's own purego calls, never
//     from the current directory
//
// The commands cmd/cdevice (devices, selftest, bench, inspect) and
// adbc/cmd/adbcsql use them.
package cdevice
