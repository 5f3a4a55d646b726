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

// Call1 is Call with one argument, without the variadic slice (it is on the
// release path of every exported and imported struct).
func Call1(fn, a uintptr) uintptr {
	if cb := lookupCallback(fn); cb != nil {
		if f, ok := cb.fn.(func(uintptr) uintptr); ok {
			return cb.call1(f, a)
		}
	}
	r, _, _ := purego.SyscallN(fn, a)
	return r
}
