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
// Structs handed to C are usually allocated by the consumer; when Go is the
// consumer or must hand C a struct to fill and keep, allocate it off the Go
// heap with New and give it back with Free.
package cdevice
