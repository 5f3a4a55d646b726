package ffi

import (
	"sync"
	"unsafe"
)

// A Handle is a non-zero integer that stands for a Go value in memory C can
// see (private_data of everything we export): C never holds a Go pointer.
//
// A handle carries its slot's generation, so a stale one (kept by C past a
// release, after the slot was reused) resolves to nothing instead of to
// another object.
type Handle uintptr

// Low bits: slot index + 1; high bits: generation. On 64-bit the top bit
// is always set: no Go pointer has it, so a handle stored in memory that
// cgo's pointer checks scan (arrow-go's cgo copies our structs into Go
// memory) is never mistaken for an unpinned Go pointer, whatever address
// the Go heap starts at (0xc000000000 under the race detector).
const (
	handleIndexBits = 22 + 10*(unsafe.Sizeof(uintptr(0))/8) // 32 on 64-bit, 22 on 32-bit
	handleIndexMask = 1<<handleIndexBits - 1
	handleTag       = (^uintptr(0) &^ (^uintptr(0) >> 1)) * (unsafe.Sizeof(uintptr(0)) / 8) // bit 63 on 64-bit, none on 32-bit
	handleGenMask   = ^uintptr(0) >> handleIndexBits &^ (handleTag >> handleIndexBits)
)

type handleSlot struct {
	v   any
	gen uintptr
}

type handleTable struct {
	mu    sync.Mutex
	slots []handleSlot
	free  []uintptr
	live  int
}

var handles handleTable

// NewHandle stores v and returns its handle.
func NewHandle(v any) Handle {
	t := &handles
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live++
	var i uintptr
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		t.slots = append(t.slots, handleSlot{})
		i = uintptr(len(t.slots) - 1)
	}
	s := &t.slots[i]
	s.v = v
	s.gen = (s.gen + 1) & handleGenMask
	return Handle(handleTag | s.gen<<handleIndexBits | (i + 1))
}

// slot returns the index of live handle h; callers hold t.mu.
func (t *handleTable) slot(h Handle) (uintptr, bool) {
	i := uintptr(h)&handleIndexMask - 1 // index 0 wraps to a huge value
	return i, i < uintptr(len(t.slots)) && t.slots[i].v != nil && uintptr(h)&handleTag == handleTag &&
		t.slots[i].gen == uintptr(h)&^handleTag>>handleIndexBits
}

// Value returns the value behind h, or nil, false if h is not live.
func (h Handle) Value() (any, bool) {
	t := &handles
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.slot(h); ok {
		return t.slots[i].v, true
	}
	return nil, false
}

// Lookup returns the value behind the handle h (private_data as C holds
// it) when h is live and holds a T; false for a released handle, garbage,
// or another kind of value.
func Lookup[T any](h uintptr) (T, bool) {
	v, _ := Handle(h).Value()
	t, ok := v.(T)
	return t, ok
}

// Delete removes h and returns the value it held; false if h was not live
// (a second release, or garbage from C).
func (h Handle) Delete() (any, bool) {
	t := &handles
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.slot(h)
	if !ok {
		return nil, false
	}
	v := t.slots[i].v
	t.slots[i].v = nil
	t.free = append(t.free, i)
	t.live--
	return v, true
}

// LiveHandles returns the number of handles not yet deleted.
func LiveHandles() int {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	return handles.live
}
