package ffi

import (
	"testing"
	"unsafe"
)

// Handles are stored where cgo's pointer checks scan (arrow-go copies our
// structs into Go memory): on 64-bit none may look like a Go heap address,
// wherever the heap starts. A stale handle resolves to nothing.
func TestHandleNeverLooksLikeAPointer(t *testing.T) {
	var hs []Handle
	for i := range 1000 {
		h := NewHandle(i)
		hs = append(hs, h)
		if uintptr(h)&handleTag != handleTag {
			t.Fatalf("handle %#x lacks the tag bit", h)
		}
	}
	for i, h := range hs {
		if v, ok := h.Value(); !ok || v != i {
			t.Fatalf("handle %#x: %v %v", h, v, ok)
		}
	}
	for _, h := range hs {
		if _, ok := h.Delete(); !ok {
			t.Fatalf("delete %#x", h)
		}
	}
	again := NewHandle("reused slot")
	defer again.Delete()
	for _, h := range hs {
		if _, ok := h.Value(); ok {
			t.Fatalf("stale handle %#x resolves", h)
		}
	}
	// The same slot and generation without the tag is garbage, not a handle.
	if unsafe.Sizeof(uintptr(0)) == 8 {
		if _, ok := Handle(uintptr(again) &^ handleTag).Value(); ok {
			t.Fatal("an untagged value resolves")
		}
	}
}
