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

// streamHandle resolves s to a hipStream_t of this GPU: nil is the null
// stream; a closed stream, another GPU's or another runtime's is an error
// (its handle would mean nothing to HIP, or the wrong device).
func (d *hipDevice) streamHandle(s device.Stream) (uintptr, error) {
	if s == nil {
		return 0, nil
	}
	st, ok := s.(*hipStream)
	switch {
	case !ok:
		return 0, fmt.Errorf("hip: a %T is not a HIP stream", s)
	case st == nil:
		return 0, nil
	case st.dev.ordinal != d.ordinal:
		return 0, fmt.Errorf("hip: the stream belongs to HIP device %d, not %d", st.dev.ordinal, d.ordinal)
	}
	if h := st.Handle(); h != 0 {
		return h, nil
	}
	return 0, errClosed
}

// memcpy queues n bytes from src to dst on s. goMem, the Go end of the
// copy, is pinned for the call, which also keeps it off the stack (a stack
// may move); the caller keeps it alive until the stream is synchronized.
func (d *hipDevice) memcpy(dst, src uintptr, n int, kind uintptr, s device.Stream, goMem *byte) error {
	if n == 0 {
		return nil
	}
	h, err := d.streamHandle(s)
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	if goMem != nil {
		pin.Pin(goMem)
		defer pin.Unpin()
	}
	return d.on(func() error {
		return d.rt.call("hipMemcpyAsync", d.rt.memcpyAsync, dst, src, uintptr(n), d.kind(kind), h)
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
	return d.memcpy(uintptr(dst)+uintptr(off), uintptr(unsafe.Pointer(&src[0])), len(src), hipMemcpyHostToDevice, s, &src[0])
}

func (d *hipDevice) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if err := checkOff("CopyToHost", off); err != nil || len(dst) == 0 {
		return err
	}
	return d.memcpy(uintptr(unsafe.Pointer(&dst[0])), uintptr(src)+uintptr(off), len(dst), hipMemcpyDeviceToHost, s, &dst[0])
}

func (d *hipDevice) CopyOnDevice(dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream) error {
	if err := checkOff("CopyOnDevice", dstOff, srcOff, n); err != nil {
		return err
	}
	return d.memcpy(uintptr(dst)+uintptr(dstOff), uintptr(src)+uintptr(srcOff), n, hipMemcpyDeviceToDevice, s, nil)
}

// MemoryInfo is the GPU's free and total memory. Pinned host memory is host
// RAM, which HIP does not report: zeros.
func (d *hipDevice) MemoryInfo() (free, total int64, err error) {
	if d.typ == abi.DeviceROCmHost {
		return 0, 0, nil
	}
	v := out[[2]uintptr]() // size_t free, total
	err = d.on(func() error {
		return d.rt.call("hipMemGetInfo", d.rt.memGetInfo, uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&v[1])))
	})
	return int64(v[0]), int64(v[1]), err
}

// A hipStream is a hipStream_t created with the default (blocking) flag.
// Close excludes every other use, so no call runs on a destroyed stream.
type hipStream struct {
	dev    *hipDevice
	mu     sync.RWMutex
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
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.handle
}

func (s *hipStream) Synchronize() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.handle == 0 {
		return errClosed
	}
	return s.dev.on(func() error { return s.dev.rt.call("hipStreamSynchronize", s.dev.rt.streamSynchronize, s.handle) })
}

// Close destroys the stream; work already queued still completes.
func (s *hipStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle == 0 {
		return nil
	}
	if err := s.dev.on(func() error { return s.dev.rt.call("hipStreamDestroy", s.dev.rt.streamDestroy, s.handle) }); err != nil {
		return err
	}
	s.handle = 0
	return nil
}

// A hipEvent keeps its hipEvent_t in C memory so that SyncEvent can hand C
// a stable hipEvent_t* (ArrowDeviceArray.sync_event). Close excludes every
// other use.
type hipEvent struct {
	dev  *hipDevice
	mu   sync.RWMutex
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

func (e *hipEvent) handle() uintptr { return *(*uintptr)(e.slot) }

func (e *hipEvent) Record(s device.Stream) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.slot == nil {
		return errClosed
	}
	sh, err := e.dev.streamHandle(s)
	if err != nil {
		return err
	}
	return e.dev.on(func() error { return e.dev.rt.call("hipEventRecord", e.dev.rt.eventRecord, e.handle(), sh) })
}

func (e *hipEvent) Synchronize() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.slot == nil {
		return errClosed
	}
	return e.dev.on(func() error { return e.dev.rt.call("hipEventSynchronize", e.dev.rt.eventSynchronize, e.handle()) })
}

// SyncEvent is the hipEvent_t*, valid until Close; 0 after.
func (e *hipEvent) SyncEvent() uintptr {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return uintptr(e.slot)
}

func (e *hipEvent) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot == nil {
		return nil
	}
	if err := e.dev.on(func() error { return e.dev.rt.call("hipEventDestroy", e.dev.rt.eventDestroy, e.handle()) }); err != nil {
		return err
	}
	ffi.Free(e.slot)
	e.slot = nil
	return nil
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
	if s == nil {
		return d.on(func() error { return d.rt.call("hipEventSynchronize", d.rt.eventSynchronize, ev) })
	}
	h, err := d.streamHandle(s)
	if err != nil {
		return err
	}
	return d.on(func() error { return d.rt.call("hipStreamWaitEvent", d.rt.streamWaitEvent, h, ev, 0) })
}
