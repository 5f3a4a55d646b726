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
	lib, err := OpenSystem(CLibrary)
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
// library cannot be loaded or is out of memory. The block is 16-aligned,
// as calloc's.
func Calloc(n uintptr) (unsafe.Pointer, error) {
	libc.once.Do(loadLibc)
	if libc.err != nil {
		return nil, libc.err
	}
	c := classOf(n)
	if c < numClasses {
		if p := kept[c].take(); p != nil {
			clear(unsafe.Slice((*byte)(p), classSize(c)))
			liveAllocs.Add(1)
			return p, nil
		}
		n = classSize(c)
	}
	raw := Call(libc.calloc, 1, blockHeader+n)
	if raw == 0 {
		return nil, fmt.Errorf("ffi: calloc(%d): out of memory", n)
	}
	*(*uintptr)(ptr(raw)) = uintptr(c)
	liveAllocs.Add(1)
	return ptr(raw + blockHeader), nil
}

// Free frees memory from Calloc or CString. Free(nil) does nothing; a
// second Free of the same block panics (the C library would abort).
func Free(p unsafe.Pointer) {
	if p == nil {
		return
	}
	h := (*[2]uintptr)(unsafe.Add(p, -blockHeader))
	if h[1] == freedMark {
		panic(fmt.Sprintf("ffi: Free(%p) of a block already freed", p))
	}
	liveAllocs.Add(-1)
	if c := h[0]; c < numClasses {
		h[1] = freedMark
		if kept[c].keep(p) {
			return
		}
	}
	Call(libc.fr, uintptr(unsafe.Add(p, -blockHeader)))
}

// Small blocks are kept for reuse rather than freed: a calloc and a free
// are two foreign calls (about 0.2 µs each through purego), and every
// import and every ADBC call takes a few small structs. A header before
// each block holds its size class (numClasses: none) and, once freed, a
// mark that catches a second Free.
const (
	blockHeader  = 16 // keeps the block 16-aligned
	minClass     = 64 // the classes: 64, 128, 256, 512 bytes
	numClasses   = 4
	keepPerClass = 256
	freedMark    = 0xf4eed0b1
)

// classOf is n's size class, or numClasses for a block too big for one.
func classOf(n uintptr) int {
	c := 0
	for size := uintptr(minClass); c < numClasses && n > size; size <<= 1 {
		c++
	}
	return c
}

func classSize(c int) uintptr { return minClass << c }

// keptBlocks are one class's blocks kept for reuse.
type keptBlocks struct {
	mu     sync.Mutex
	blocks []unsafe.Pointer
}

var kept [numClasses]keptBlocks

// take returns a kept block, or nil.
func (k *keptBlocks) take() unsafe.Pointer {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(k.blocks)
	if n == 0 {
		return nil
	}
	p := k.blocks[n-1]
	k.blocks = k.blocks[:n-1]
	(*[2]uintptr)(unsafe.Add(p, -blockHeader))[1] = 0
	return p
}

// keep keeps p for reuse, unless enough are kept already.
func (k *keptBlocks) keep(p unsafe.Pointer) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.blocks) >= keepPerClass {
		return false
	}
	k.blocks = append(k.blocks, p)
	return true
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
