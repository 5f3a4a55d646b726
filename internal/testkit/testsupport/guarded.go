//go:build linux || darwin

package testsupport

import (
	"os"
	"sync"
	"syscall"
	"testing"
	"unsafe"
)

// Sizes of the guarded memory's two parts.
const (
	GuardedArenaSize = 256 << 10 // structs, pointer arrays, strings
	GuardedStoreSize = 64 << 10  // what data pointers point into
)

// GuardedMemory stands in for a C producer's memory in fuzz targets: one
// mapping [guard][Arena][guard][Store][guard] with PROT_NONE guard pages.
// Store ends right at a guard page, so a read past what a producer
// declared faults instead of quietly reading a neighbour. It is off the Go
// heap, as a C producer's memory would be.
type GuardedMemory struct {
	Arena, Store []byte
	used         int
}

var (
	guardedOnce sync.Once
	guarded     *GuardedMemory
	guardedErr  error
)

// Guarded returns the process's guarded memory, cleared (fuzz inputs run
// one at a time in a process), or skips t where no mapping can be made.
func Guarded(t testing.TB) *GuardedMemory {
	t.Helper()
	guardedOnce.Do(func() {
		page := os.Getpagesize()
		arena := (GuardedArenaSize + page - 1) / page * page
		store := (GuardedStoreSize + page - 1) / page * page
		total := page + arena + page + store + page
		region, err := syscall.Mmap(-1, 0, total, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			guardedErr = err
			return
		}
		for _, g := range []int{0, page + arena, total - page} {
			if err := syscall.Mprotect(region[g:g+page], syscall.PROT_NONE); err != nil {
				guardedErr = err
				return
			}
		}
		s0 := page + arena + page
		guarded = &GuardedMemory{
			Arena: region[page : page+arena : page+arena],
			Store: region[s0+store-GuardedStoreSize : s0+store : s0+store],
		}
	})
	if guardedErr != nil {
		t.Skipf("no guarded mapping: %v", guardedErr)
	}
	m := guarded
	clear(m.Arena[:m.used])
	clear(m.Store)
	m.used = 0
	return m
}

// Alloc returns n zeroed bytes of the arena, 16-byte aligned, or nil when
// the arena is full (fuzz inputs are bounded far below that).
func (m *GuardedMemory) Alloc(n int) unsafe.Pointer {
	start := (m.used + 15) &^ 15
	if n <= 0 || start+n > len(m.Arena) {
		return nil
	}
	m.used = start + n
	return unsafe.Pointer(&m.Arena[start])
}

// Blob copies b into the arena followed by pad zero bytes; 0 when full.
func (m *GuardedMemory) Blob(b []byte, pad int) uintptr {
	p := m.Alloc(len(b) + pad)
	if p == nil {
		return 0
	}
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return uintptr(p)
}

// CString copies b into the arena NUL-terminated; 0 when full.
func (m *GuardedMemory) CString(b []byte) uintptr { return m.Blob(b, 1) }

// Ptrs returns an arena array of n pointers; nil when n <= 0 or full.
func (m *GuardedMemory) Ptrs(n int) []uintptr {
	if n <= 0 {
		return nil
	}
	p := m.Alloc(n * int(unsafe.Sizeof(uintptr(0))))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*uintptr)(p), n)
}

// Int64s returns an arena array of n int64s; nil when n <= 0 or full.
func (m *GuardedMemory) Int64s(n int) []int64 {
	p := m.Alloc(n * 8)
	if p == nil {
		return nil
	}
	return unsafe.Slice((*int64)(p), n)
}

// StoreAddr is the address of the store's byte off.
func (m *GuardedMemory) StoreAddr(off int) uintptr {
	return uintptr(unsafe.Pointer(&m.Store[0])) + uintptr(off)
}

// InStore reports whether [p, p+n) lies in the store.
func (m *GuardedMemory) InStore(p uintptr, n int64) bool {
	lo := m.StoreAddr(0)
	if p < lo || n < 0 {
		return false
	}
	return int64(p-lo) <= int64(len(m.Store)) && n <= int64(len(m.Store))-int64(p-lo)
}
