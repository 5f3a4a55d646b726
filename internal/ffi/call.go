package ffi

import (
	"fmt"
	"runtime"

	"github.com/ebitengine/purego"
)

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

// Bind makes the Go function variable that fptr points to call the C
// function at fn with purego's typed calls, for what Call cannot pass:
// floating-point arguments and results in their registers, and structs by
// value where purego supports them (amd64 and arm64). A signature purego
// cannot call on this platform is an error, not a panic.
func Bind(fptr any, fn uintptr) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("ffi: cannot bind %T on %s/%s: %v", fptr, runtime.GOOS, runtime.GOARCH, p)
		}
	}()
	purego.RegisterFunc(fptr, fn)
	return nil
}
