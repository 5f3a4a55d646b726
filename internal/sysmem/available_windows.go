package sysmem

import (
	"sync"
	"unsafe"

	"github.com/purearrow/cdevice/internal/ffi"
)

// globalMemoryStatusEx is kernel32's, looked up once (0: not there).
var globalMemoryStatusEx = sync.OnceValue(func() uintptr {
	lib, err := ffi.OpenSystem("kernel32.dll")
	if err != nil {
		return 0
	}
	fn, _ := lib.Symbol("GlobalMemoryStatusEx")
	return fn
})

// available is the physical memory available now
// (GlobalMemoryStatusEx's ullAvailPhys; x/sys/windows does not bind it).
func available() (int64, bool) {
	fn := globalMemoryStatusEx()
	if fn == 0 {
		return 0, false
	}
	// MEMORYSTATUSEX: dwLength, dwMemoryLoad, then seven DWORDLONGs of
	// which ullAvailPhys is the second; in C memory, as C writes it.
	const size, availPhys = 64, 16
	p, err := ffi.Calloc(size)
	if err != nil {
		return 0, false
	}
	defer ffi.Free(p)
	*(*uint32)(p) = size
	if ffi.Call(fn, uintptr(p)) == 0 {
		return 0, false
	}
	n := *(*uint64)(unsafe.Add(p, availPhys))
	return int64(n), int64(n) > 0
}
