package hip

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// hipDevice is GPU ordinal as ROCM (device memory) or ROCM_HOST (pinned
// host memory) — the same GPU, two kinds of allocation.
type hipDevice struct {
	rt      *hipRT
	typ     abi.DeviceType
	ordinal int
	name    string
}

func (d *hipDevice) Type() abi.DeviceType { return d.typ }
func (d *hipDevice) ID() int64            { return int64(d.ordinal) }
func (d *hipDevice) Name() string         { return d.name }
func (d *hipDevice) HostAccessible() bool { return d.typ == abi.DeviceROCmHost }

// on runs f with the calling goroutine locked to its OS thread and that
// thread's current device set to d: HIP's current device is per thread.
func (d *hipDevice) on(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.rt.call("hipSetDevice", d.rt.setDevice, uintptr(d.ordinal)); err != nil {
		return err
	}
	return f()
}

func (d *hipDevice) Alloc(size int) (device.Pointer, error) {
	if size <= 0 {
		return 0, fmt.Errorf("hip: Alloc(%d): size must be positive", size)
	}
	p := out[uintptr]()
	err := d.on(func() error {
		if d.typ == abi.DeviceROCmHost {
			return d.rt.call("hipHostMalloc", d.rt.hostMalloc, uintptr(unsafe.Pointer(p)), uintptr(size), hipHostMallocDefault)
		}
		return d.rt.call("hipMalloc", d.rt.malloc, uintptr(unsafe.Pointer(p)), uintptr(size))
	})
	if err != nil {
		return 0, err
	}
	return device.Pointer(*p), nil
}

func (d *hipDevice) Free(p device.Pointer) error {
	return d.on(func() error {
		if d.typ == abi.DeviceROCmHost {
			return d.rt.call("hipHostFree", d.rt.hostFree, uintptr(p))
		}
		return d.rt.call("hipFree", d.rt.free, uintptr(p))
	})
}

// kind picks the hipMemcpyKind: pinned host memory is not device memory, so
// there the runtime infers the direction (HIP always has unified addressing).
func (d *hipDevice) kind(k uintptr) uintptr {
	if d.typ == abi.DeviceROCmHost {
		return hipMemcpyDefault
	}
	return k
}

func streamHandle(s device.Stream) uintptr {
	if s == nil {
		return 0 // the null stream of the current device
	}
	return s.Handle()
}

// memcpy queues n bytes from src to dst on s. Host slices come from callers
// through the Device interface, so they are on the Go heap, which does not
// move; the caller keeps them alive until the stream is synchronized.
func (d *hipDevice) memcpy(dst, src uintptr, n int, kind uintptr, s device.Stream) error {
	if n == 0 {
		return nil
	}
	return d.on(func() error {
		return d.rt.call("hipMemcpyAsync", d.rt.memcpyAsync, dst, src, uintptr(n), d.kind(kind), streamHandle(s))
	})
}

func checkOff(op string, off ...int) error {
	for _, o := range off {
		if o < 0 {
			return fmt.Errorf("hip: %s: negative offset %d", op, o)
		}
	}
	return nil
}

func (d *hipDevice) CopyToDevice(dst device.Pointer, off int, src []byte, s device.Stream) error {
	if err := checkOff("CopyToDevice", off); err != nil || len(src) == 0 {
		return err
	}
	return d.memcpy(uintptr(dst)+uintptr(off), uintptr(unsafe.Pointer(unsafe.SliceData(src))), len(src), hipMemcpyHostToDevice, s)
}

func (d *hipDevice) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if err := checkOff("CopyToHost", off); err != nil || len(dst) == 0 {
		return err
	}
	return d.memcpy(uintptr(unsafe.Pointer(unsafe.SliceData(dst))), uintptr(src)+uintptr(off), len(dst), hipMemcpyDeviceToHost, s)
}

func (d *hipDevice) CopyOnDevice(dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream) error {
	if err := checkOff("CopyOnDevice", dstOff, srcOff, n); err != nil {
		return err
	}
	return d.memcpy(uintptr(dst)+uintptr(dstOff), uintptr(src)+uintptr(srcOff), n, hipMemcpyDeviceToDevice, s)
}

func (d *hipDevice) MemoryInfo() (free, total int64, err error) {
	v := out[[2]uintptr]() // size_t free, total
	err = d.on(func() error {
		return d.rt.call("hipMemGetInfo", d.rt.memGetInfo, uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&v[1])))
	})
	return int64(v[0]), int64(v[1]), err
}

// A hipStream is a hipStream_t created with the default (blocking) flag.
type hipStream struct {
	dev    *hipDevice
	mu     sync.Mutex
	handle uintptr // 0 once closed
}

func (d *hipDevice) NewStream() (device.Stream, error) {
	h := out[uintptr]()
	err := d.on(func() error {
		return d.rt.call("hipStreamCreateWithFlags", d.rt.streamCreateWithFlags, uintptr(unsafe.Pointer(h)), hipStreamDefault)
	})
	if err != nil {
		return nil, err
	}
	return &hipStream{dev: d, handle: *h}, nil
}

func (s *hipStream) Handle() uintptr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handle
}

func (s *hipStream) Synchronize() error {
	h := s.Handle()
	if h == 0 {
		return errClosed
	}
	return s.dev.on(func() error { return s.dev.rt.call("hipStreamSynchronize", s.dev.rt.streamSynchronize, h) })
}

func (s *hipStream) Close() error {
	s.mu.Lock()
	h := s.handle
	s.handle = 0
	s.mu.Unlock()
	if h == 0 {
		return nil
	}
	return s.dev.on(func() error { return s.dev.rt.call("hipStreamDestroy", s.dev.rt.streamDestroy, h) })
}

// A hipEvent keeps its hipEvent_t in C memory so that SyncEvent can hand C
// a stable hipEvent_t* (ArrowDeviceArray.sync_event).
type hipEvent struct {
	dev  *hipDevice
	mu   sync.Mutex
	slot unsafe.Pointer // *hipEvent_t in C memory; nil once closed
}

func (d *hipDevice) NewEvent() (device.Event, error) {
	slot, err := ffi.Calloc(unsafe.Sizeof(uintptr(0)))
	if err != nil {
		return nil, err
	}
	err = d.on(func() error {
		return d.rt.call("hipEventCreateWithFlags", d.rt.eventCreateWithFlags, uintptr(slot), hipEventDisableTiming)
	})
	if err != nil {
		ffi.Free(slot)
		return nil, err
	}
	return &hipEvent{dev: d, slot: slot}, nil
}

func (e *hipEvent) handle() (uintptr, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot == nil {
		return 0, errClosed
	}
	return *(*uintptr)(e.slot), nil
}

func (e *hipEvent) Record(s device.Stream) error {
	h, err := e.handle()
	if err != nil {
		return err
	}
	return e.dev.on(func() error { return e.dev.rt.call("hipEventRecord", e.dev.rt.eventRecord, h, streamHandle(s)) })
}

func (e *hipEvent) Synchronize() error {
	h, err := e.handle()
	if err != nil {
		return err
	}
	return e.dev.on(func() error { return e.dev.rt.call("hipEventSynchronize", e.dev.rt.eventSynchronize, h) })
}

func (e *hipEvent) SyncEvent() uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	return uintptr(e.slot)
}

func (e *hipEvent) Close() error {
	e.mu.Lock()
	slot := e.slot
	e.slot = nil
	e.mu.Unlock()
	if slot == nil {
		return nil
	}
	h := *(*uintptr)(slot)
	ffi.Free(slot)
	return e.dev.on(func() error { return e.dev.rt.call("hipEventDestroy", e.dev.rt.eventDestroy, h) })
}

// WaitSyncEvent waits for a producer's hipEvent_t*: on the host when s is
// nil, else by making s wait on the device.
func (d *hipDevice) WaitSyncEvent(syncEvent uintptr, s device.Stream) error {
	if syncEvent == 0 {
		return nil
	}
	ev := *(*uintptr)(abi.Pointer(syncEvent))
	if ev == 0 {
		return fmt.Errorf("hip: sync_event %#x points at a NULL hipEvent_t", syncEvent)
	}
	return d.on(func() error {
		if s == nil {
			return d.rt.call("hipEventSynchronize", d.rt.eventSynchronize, ev)
		}
		return d.rt.call("hipStreamWaitEvent", d.rt.streamWaitEvent, s.Handle(), ev, 0)
	})
}
