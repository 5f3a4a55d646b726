package ffi

import "sync"

// A Handle is a non-zero integer that stands for a Go value in memory C can
// see (private_data of everything we export): C never holds a Go pointer.
type Handle uintptr

type handleTable struct {
	mu    sync.Mutex
	slots []any
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
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		t.slots[i] = v
		return Handle(i + 1)
	}
	t.slots = append(t.slots, v)
	return Handle(len(t.slots))
}

// slot returns the index of live handle h; callers hold t.mu.
func (t *handleTable) slot(h Handle) (uintptr, bool) {
	i := uintptr(h) - 1 // h == 0 wraps to a huge index
	return i, i < uintptr(len(t.slots)) && t.slots[i] != nil
}

// Value returns the value behind h, or nil, false if h is not live.
func (h Handle) Value() (any, bool) {
	t := &handles
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.slot(h); ok {
		return t.slots[i], true
	}
	return nil, false
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
	v := t.slots[i]
	t.slots[i] = nil
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
