// Package ffi is the only place in cdevice that touches purego.
//
// It owns: loading shared libraries and finding their symbols, calling foreign
// C function pointers, the fixed table of Go callbacks that C can call, the
// integer handle table that stands behind every private_data we export,
// off-heap (C heap) allocation and C strings, and the counters that leak
// checks read.
package ffi
