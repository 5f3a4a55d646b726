package ffi

import (
	"runtime"
	"unsafe"
)

// AppendUint64 appends a 64-bit C argument (int64_t, cl_bitfield) to the
// words of a call: one word on 64-bit targets; on 32-bit ones two words, low
// first, and on arm starting at an even word, as AAPCS aligns 8-byte
// arguments.
func AppendUint64(args []uintptr, v uint64) []uintptr {
	if unsafe.Sizeof(uintptr(0)) == 8 {
		return append(args, uintptr(v))
	}
	if runtime.GOARCH == "arm" && len(args)%2 == 1 {
		args = append(args, 0)
	}
	return append(args, uintptr(v), uintptr(v>>32))
}

// Uint64Arg reads back a 64-bit argument that C passed to a callback as
// words[i:] (i = the number of word arguments before it), the inverse of
// AppendUint64.
func Uint64Arg(words []uintptr, i int) uint64 {
	if unsafe.Sizeof(uintptr(0)) == 8 {
		return uint64(words[i])
	}
	if runtime.GOARCH == "arm" && i%2 == 1 {
		i++
	}
	return uint64(words[i]) | uint64(words[i+1])<<32
}
