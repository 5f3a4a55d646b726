package ffi

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The C heap: off-heap memory for structs and strings that C may keep.
var (
	libc struct {
		once               sync.Once
		err                error
		malloc, calloc, fr uintptr
	}
	liveAllocs atomic.Int64
)

func loadLibc() {
	lib, err := Open(CLibrary)
	if err != nil {
		libc.err = fmt.Errorf("ffi: loading the C library: %w", err)
		return
	}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{{"malloc", &libc.malloc}, {"calloc", &libc.calloc}, {"free", &libc.fr}} {
		if *s.p, err = lib.Symbol(s.name); err != nil {
			libc.err = fmt.Errorf("ffi: %w", err)
			return
		}
	}
}

// Calloc returns n zeroed bytes of C heap memory, or an error if the C
// library cannot be loaded or is out of memory.
func Calloc(n uintptr) (unsafe.Pointer, error) {
	libc.once.Do(loadLibc)
	if libc.err != nil {
		return nil, libc.err
	}
	if n == 0 {
		n = 1
	}
	p := Call(libc.calloc, 1, n)
	if p == 0 {
		return nil, fmt.Errorf("ffi: calloc(%d): out of memory", n)
	}
	liveAllocs.Add(1)
	return ptr(p), nil
}

// Free frees memory from Calloc or CString. Free(nil) does nothing.
func Free(p unsafe.Pointer) {
	if p == nil {
		return
	}
	liveAllocs.Add(-1)
	Call(libc.fr, uintptr(p))
}

// LiveAllocations returns the number of Calloc/CString blocks not yet freed.
func LiveAllocations() int64 { return liveAllocs.Load() }

// CString copies s into C heap memory with a terminating NUL.
func CString(s string) (unsafe.Pointer, error) {
	p, err := Calloc(uintptr(len(s)) + 1)
	if err != nil {
		return nil, err
	}
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return p, nil
}

// GoString copies the NUL-terminated C string at p; "" for NULL.
func GoString(p uintptr) string {
	if p == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(ptr(p)), CStringLen(p)))
}

// CStringLen returns the length of the NUL-terminated C string at p.
func CStringLen(p uintptr) int {
	if p == 0 {
		return 0
	}
	n := 0
	for *(*byte)(ptr(p + uintptr(n))) != 0 {
		n++
	}
	return n
}

func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
