package ffi

import "github.com/ebitengine/purego"

// Call calls the C function at fn with integer or pointer arguments and
// returns its integer or pointer result.
//
// When fn is one of our own callbacks (a struct we exported came back to us)
// the Go function is called directly, without a round trip through C.
func Call(fn uintptr, args ...uintptr) uintptr {
	if cb := lookupCallback(fn); cb != nil {
		return cb.call(args)
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
