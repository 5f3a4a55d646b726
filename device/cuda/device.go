package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// A Device is one kind of memory of one CUDA device: device memory
// (abi.DeviceCUDA), pinned host memory (abi.DeviceCUDAHost) or managed
// memory (abi.DeviceCUDAManaged). Every call makes the device current on a
// locked OS thread first, so a Device may be used from any goroutine.
//
// Copies are asynchronous on the stream (nil: the device's default stream).
// Go memory given to a copy must stay reachable and untouched until that
// stream or a later-recorded event is synchronized; a caller that drops its
// last reference before then must pin it (runtime.Pinner) until the sync.
type Device struct {
	g    *gpu
	kind abi.DeviceType
}

var _ device.Device = (*Device)(nil)

var errClosed = errors.New("cuda: use after Close")

// Kind is the memory kind: abi.DeviceCUDA, abi.DeviceCUDAHost or abi.DeviceCUDAManaged.
func (d *Device) Kind() abi.DeviceType { return d.kind }

// Ordinal is the CUDA device ordinal (what cudaSetDevice takes).
func (d *Device) Ordinal() int { return d.g.ordinal }

// ComputeCapability is the device's compute capability, e.g. 9, 0 for sm_90.
func (d *Device) ComputeCapability() (major, minor int) { return d.g.ccMajor, d.g.ccMinor }

// ErrorName is the runtime's name for an error code, e.g. "cudaErrorMemoryAllocation".
func (d *Device) ErrorName(code int) string { return d.g.rt.errorName(code) }

func (d *Device) Type() abi.DeviceType { return d.kind }
func (d *Device) ID() int64            { return int64(d.g.ordinal) }
func (d *Device) String() string       { return fmt.Sprintf("%s:%d", d.kind, d.g.ordinal) }

func (d *Device) Name() string {
	switch d.kind {
	case abi.DeviceCUDAHost:
		return d.g.name + " (pinned host memory)"
	case abi.DeviceCUDAManaged:
		return d.g.name + " (managed memory)"
	}
	return d.g.name
}

// HostAccessible: pinned host and managed memory are, device memory is not.
func (d *Device) HostAccessible() bool { return d.kind != abi.DeviceCUDA }

func (d *Device) on(f func() error) error { return d.g.rt.onDevice(d.g.ordinal, f) }

func (d *Device) Alloc(size int) (device.Pointer, error) {
	if size <= 0 {
		return 0, fmt.Errorf("cuda: %v: Alloc(%d): size must be positive", d, size)
	}
	r := d.g.rt
	o := newOut()
	defer o.release()
	err := d.on(func() error {
		switch d.kind {
		case abi.DeviceCUDAHost:
			return r.call("cudaMallocHost", r.mallocHost, o.ptr(0), uintptr(size))
		case abi.DeviceCUDAManaged:
			return r.call("cudaMallocManaged", r.mallocManaged, o.ptr(0), uintptr(size), memAttachGlobal)
		}
		return r.call("cudaMalloc", r.malloc, o.ptr(0), uintptr(size))
	})
	if err != nil {
		return 0, fmt.Errorf("%v: Alloc(%d): %w", d, size, err)
	}
	return device.Pointer(o.uintptr(0)), nil
}

// Free gives back memory from Alloc of the same kind; Free(0) does nothing.
func (d *Device) Free(p device.Pointer) error {
	if p == 0 {
		return nil
	}
	r := d.g.rt
	err := d.on(func() error {
		if d.kind == abi.DeviceCUDAHost {
			return r.call("cudaFreeHost", r.freeHost, uintptr(p))
		}
		return r.call("cudaFree", r.free, uintptr(p))
	})
	if err != nil {
		return fmt.Errorf("%v: Free(%#x): %w", d, uintptr(p), err)
	}
	return nil
}

// kinds of copy: explicit for device memory; host and managed memory are
// addressed by unified virtual addresses, and an explicit direction that
// does not match the pointers is undefined, so the runtime infers it.
func (d *Device) memcpyKind(explicit uintptr) uintptr {
	if d.kind == abi.DeviceCUDA {
		return explicit
	}
	return memcpyDefault
}

func (d *Device) CopyToDevice(dst device.Pointer, off int, src []byte, s device.Stream) error {
	if len(src) == 0 {
		return nil
	}
	if dst == 0 || off < 0 {
		return fmt.Errorf("cuda: %v: CopyToDevice(%#x, %d): bad destination", d, uintptr(dst), off)
	}
	return d.memcpy("CopyToDevice", uintptr(dst)+uintptr(off), uintptr(unsafe.Pointer(&src[0])), len(src),
		d.memcpyKind(memcpyHostToDevice), s, &src[0])
}

func (d *Device) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if len(dst) == 0 {
		return nil
	}
	if src == 0 || off < 0 {
		return fmt.Errorf("cuda: %v: CopyToHost(%#x, %d): bad source", d, uintptr(src), off)
	}
	return d.memcpy("CopyToHost", uintptr(unsafe.Pointer(&dst[0])), uintptr(src)+uintptr(off), len(dst),
		d.memcpyKind(memcpyDeviceToHost), s, &dst[0])
}

func (d *Device) CopyOnDevice(dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream) error {
	if n == 0 {
		return nil
	}
	if dst == 0 || src == 0 || dstOff < 0 || srcOff < 0 || n < 0 {
		return fmt.Errorf("cuda: %v: CopyOnDevice(%#x+%d, %#x+%d, %d): bad argument", d, uintptr(dst), dstOff, uintptr(src), srcOff, n)
	}
	return d.memcpy("CopyOnDevice", uintptr(dst)+uintptr(dstOff), uintptr(src)+uintptr(srcOff), n,
		d.memcpyKind(memcpyDeviceToDevice), s, nil)
}

// memcpy queues cudaMemcpyAsync. goMem is the Go end of the copy, pinned
// for the call (which also keeps it off the stack: a stack may move).
func (d *Device) memcpy(op string, dst, src uintptr, n int, kind uintptr, s device.Stream, goMem *byte) error {
	h, err := d.g.streamHandle(s)
	if err != nil {
		return fmt.Errorf("cuda: %v: %s: %w", d, op, err)
	}
	var pin runtime.Pinner
	if goMem != nil {
		pin.Pin(goMem)
		defer pin.Unpin()
	}
	r := d.g.rt
	err = d.on(func() error {
		return r.call("cudaMemcpyAsync", r.memcpyAsync, dst, src, uintptr(n), kind, h)
	})
	if err != nil {
		return fmt.Errorf("%v: %s of %d bytes: %w", d, op, n, err)
	}
	return nil
}

// streamHandle resolves s to a cudaStream_t of this device.
func (g *gpu) streamHandle(s device.Stream) (uintptr, error) {
	switch st := s.(type) {
	case nil:
		return g.stream, nil
	case *stream:
		if st == nil {
			return g.stream, nil
		}
		if st.g != g {
			return 0, fmt.Errorf("the stream belongs to CUDA device %d, not %d", st.g.ordinal, g.ordinal)
		}
		if h := st.h.Load(); h != 0 {
			return h, nil
		}
		return 0, errClosed
	}
	return 0, fmt.Errorf("a %T is not a CUDA stream", s)
}

func isNilStream(s device.Stream) bool {
	st, ok := s.(*stream)
	return s == nil || ok && st == nil
}

func (d *Device) NewStream() (device.Stream, error) {
	r := d.g.rt
	o := newOut()
	defer o.release()
	err := d.on(func() error {
		return r.call("cudaStreamCreateWithFlags", r.streamCreateWithFlags, o.ptr(0), streamNonBlocking)
	})
	if err != nil {
		return nil, fmt.Errorf("%v: NewStream: %w", d, err)
	}
	st := &stream{g: d.g}
	st.h.Store(o.uintptr(0))
	return st, nil
}

func (d *Device) NewEvent() (device.Event, error) {
	// The cudaEvent_t lives off the Go heap: SyncEvent hands C its address.
	slot, err := ffi.Calloc(unsafe.Sizeof(uintptr(0)))
	if err != nil {
		return nil, err
	}
	r := d.g.rt
	err = d.on(func() error {
		return r.call("cudaEventCreateWithFlags", r.eventCreateWithFlags, uintptr(slot), eventDisableTiming)
	})
	if err != nil {
		ffi.Free(slot)
		return nil, fmt.Errorf("%v: NewEvent: %w", d, err)
	}
	return &event{g: d.g, slot: slot}, nil
}

// WaitSyncEvent waits for the cudaEvent_t that syncEvent (a cudaEvent_t*,
// as ArrowDeviceArray.sync_event) points to: on the host when s is nil,
// else by making s wait for it (cudaStreamWaitEvent) without blocking.
func (d *Device) WaitSyncEvent(syncEvent uintptr, s device.Stream) error {
	if syncEvent == 0 {
		return nil
	}
	ev := *(*uintptr)(abi.Pointer(syncEvent))
	if ev == 0 {
		return fmt.Errorf("cuda: %v: sync_event %#x points to a NULL cudaEvent_t", d, syncEvent)
	}
	r := d.g.rt
	if isNilStream(s) {
		err := d.on(func() error { return r.call("cudaEventSynchronize", r.eventSynchronize, ev) })
		if err != nil {
			return fmt.Errorf("%v: WaitSyncEvent: %w", d, err)
		}
		return nil
	}
	h, err := d.g.streamHandle(s)
	if err != nil {
		return fmt.Errorf("cuda: %v: WaitSyncEvent: %w", d, err)
	}
	err = d.on(func() error { return r.call("cudaStreamWaitEvent", r.streamWaitEvent, h, ev, 0) })
	if err != nil {
		return fmt.Errorf("%v: WaitSyncEvent: %w", d, err)
	}
	return nil
}

// MemoryInfo is the device's free and total memory. Pinned host memory is
// host RAM, which the CUDA runtime does not report: zeros.
func (d *Device) MemoryInfo() (free, total int64, err error) {
	if d.kind == abi.DeviceCUDAHost {
		return 0, 0, nil
	}
	r := d.g.rt
	o := newOut()
	defer o.release()
	err = d.on(func() error { return r.call("cudaMemGetInfo", r.memGetInfo, o.ptr(0), o.ptr(1)) })
	if err != nil {
		return 0, 0, fmt.Errorf("%v: MemoryInfo: %w", d, err)
	}
	return int64(o.uintptr(0)), int64(o.uintptr(1)), nil
}

// A stream is a non-blocking cudaStream_t.
type stream struct {
	g  *gpu
	mu sync.Mutex // serializes Close
	h  atomic.Uintptr
}

func (s *stream) Handle() uintptr { return s.h.Load() }

func (s *stream) Synchronize() error {
	h := s.h.Load()
	if h == 0 {
		return errClosed
	}
	r := s.g.rt
	return r.onDevice(s.g.ordinal, func() error { return r.call("cudaStreamSynchronize", r.streamSynchronize, h) })
}

// Close destroys the stream; work already queued still completes.
func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.h.Load()
	if h == 0 {
		return nil
	}
	r := s.g.rt
	if err := r.onDevice(s.g.ordinal, func() error { return r.call("cudaStreamDestroy", r.streamDestroy, h) }); err != nil {
		return err
	}
	s.h.Store(0)
	return nil
}

// An event is a cudaEvent_t without timing, kept in C memory so that its
// address can be a sync_event.
type event struct {
	g    *gpu
	mu   sync.RWMutex // Close excludes every other use
	slot unsafe.Pointer
}

func (e *event) handle() uintptr { return *(*uintptr)(e.slot) }

func (e *event) Record(s device.Stream) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.slot == nil {
		return errClosed
	}
	h, err := e.g.streamHandle(s)
	if err != nil {
		return fmt.Errorf("cuda: Record: %w", err)
	}
	r := e.g.rt
	return r.onDevice(e.g.ordinal, func() error { return r.call("cudaEventRecord", r.eventRecord, e.handle(), h) })
}

func (e *event) Synchronize() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.slot == nil {
		return errClosed
	}
	r := e.g.rt
	return r.onDevice(e.g.ordinal, func() error { return r.call("cudaEventSynchronize", r.eventSynchronize, e.handle()) })
}

// SyncEvent is the cudaEvent_t*, valid until Close; 0 after.
func (e *event) SyncEvent() uintptr {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return uintptr(e.slot)
}

func (e *event) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot == nil {
		return nil
	}
	r := e.g.rt
	if err := r.onDevice(e.g.ordinal, func() error { return r.call("cudaEventDestroy", r.eventDestroy, e.handle()) }); err != nil {
		return err
	}
	ffi.Free(e.slot)
	e.slot = nil
	return nil
}
