package gpurt

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// The device properties struct changes size between versions (cudaDeviceProp
// about 1 KiB, hipDeviceProp_tR0600 about 1.5 KiB): it gets far more room than
// it needs, off the Go heap, and only name[256], its first member, is read.
const (
	PropBufSize = 8192
	propNameLen = 256
)

// gpu is one device ordinal, shared by the Devices of its kinds of memory.
type gpu struct {
	r       *Runtime
	ordinal int
	dev     uintptr // the API's name for it, and what makes it current (openGPU)
	current uintptr
	open    bool // what openGPU took is not given back yet
	name    string
	attrs   []int   // parallel to Table.Attributes
	stream  uintptr // what a nil device.Stream stands for (see the package doc)
	// unrecordedBusy: EventQuery answers NotReady for an event never
	// recorded, so host waits poll a marker (wait.go).
	unrecordedBusy bool
	hostCPU        bool        // the GPU is the host's own processors (Table.HostCPU)
	shut           atomic.Bool // close was called: every use is refused
	staging        stagingPool // what ReadValues reads through (read.go)
}

// newGPU opens GPU ordinal and reads what a probe reads of it. On failure
// it gives back everything it took, or returns the GPU with the error
// when that fails too, for the caller to close again.
func newGPU(r *Runtime, ordinal int) (*gpu, error) {
	dev, current, err := r.openGPU(ordinal)
	if err != nil {
		return nil, err
	}
	g := &gpu{r: r, ordinal: ordinal, dev: dev, current: current, open: true}
	if err := g.read(); err != nil {
		if g.close() != nil { // the first error is the one to report
			return g, err
		}
		return nil, err
	}
	return g, nil
}

// read reads the GPU's name and attributes and makes its default stream.
func (g *gpu) read() error {
	r := g.r
	props, err := cCalloc(PropBufSize)
	if err != nil {
		return err
	}
	defer ffi.Free(props)
	o := newOut()
	defer o.release()
	err = g.on(func() error {
		if err := r.deviceName(props, g.dev); err != nil {
			return err
		}
		for _, a := range r.t.Attributes {
			if err := r.Call(DeviceGetAttribute, o.ptr(0), uintptr(a), g.dev); err != nil {
				return err
			}
			g.attrs = append(g.attrs, o.int(0))
		}
		if err := g.probeUnrecorded(); err != nil {
			return err
		}
		if err := g.probeHostCPU(); err != nil {
			return err
		}
		s, err := r.newStream()
		if err != nil {
			return err
		}
		g.stream = s
		return nil
	})
	if err != nil {
		return err
	}
	name := unsafe.Slice((*byte)(props), propNameLen)
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	g.name = string(name)
	return nil
}

// probeHostCPU asks the runtime's HostCPU question, if it has one, on a
// stream of its own. The GPU must be current.
func (g *gpu) probeHostCPU() error {
	r := g.r
	if r.hostCPU == nil {
		return nil
	}
	s, err := r.newStream()
	if err != nil {
		return err
	}
	g.hostCPU = r.hostCPU(s)
	return r.destroy(StreamDestroy, s)
}

// cCalloc is ffi.Calloc with its rare failure (no C library, the C heap
// exhausted) wrapping device.ErrRuntime, as every error of a Device does.
func cCalloc(n uintptr) (unsafe.Pointer, error) {
	p, err := ffi.Calloc(n)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", device.ErrRuntime, err)
	}
	return p, nil
}

// on runs f with the GPU current, unless the GPU was closed: its default
// stream and, through the driver API, its context are gone.
func (g *gpu) on(f func() error) error {
	if g.shut.Load() {
		return g.closed("device")
	}
	return g.r.on(g.current, f)
}

// close destroys the stagings of ReadValues and the default stream and gives
// back what openGPU took; a second close does nothing. From its start, the GPU's Devices, streams and
// events refuse every call with device.ErrReleased.
func (g *gpu) close() error {
	g.shut.Store(true)
	if err := g.r.on(g.current, g.closeStaging); err != nil {
		return err
	}
	if g.stream != 0 {
		if err := g.r.on(g.current, func() error { return g.r.Call(StreamDestroy, g.stream) }); err != nil {
			return err
		}
		g.stream = 0
	}
	if g.open {
		if err := g.r.closeGPU(g.dev); err != nil {
			return err
		}
		g.open = false
	}
	return nil
}

func (g *gpu) closed(what string) error {
	return fmt.Errorf("%w: %s: %s used after Close", device.ErrReleased, g.r.t.Name, what)
}

// withStream runs f with the handle s stands for on this GPU: the default
// stream for nil. A stream of another GPU or runtime, or a closed one, is
// refused (its handle would mean nothing to the runtime, or the wrong
// device); s cannot be closed while f runs.
func (g *gpu) withStream(s device.Stream, f func(h uintptr) error) error {
	switch st := s.(type) {
	case nil:
		return f(g.stream)
	case *Stream:
		if st == nil {
			return f(g.stream)
		}
		if st.g != g {
			return fmt.Errorf("%w: the stream belongs to %s device %d, not %s device %d", device.ErrInvalid,
				st.g.r.t.Title, st.g.ordinal, g.r.t.Title, g.ordinal)
		}
		st.mu.RLock()
		defer st.mu.RUnlock()
		if st.h == 0 {
			return g.closed("stream")
		}
		return f(st.h)
	}
	return fmt.Errorf("%w: a %T is not a %s stream", device.ErrInvalid, s, g.r.t.Title)
}

// A Device is one kind of memory (Table.Kinds) of one GPU. Every call makes
// the GPU current on a locked OS thread first, so a Device may be used from
// any goroutine.
//
// Copies are asynchronous on the stream (nil: the GPU's default stream).
// Go memory given to a copy must stay reachable and untouched until that
// stream or a later-recorded event is synchronized; a caller that drops its
// last reference before then must pin it (runtime.Pinner) until the sync.
type Device struct {
	g    *gpu
	kind int // index in Table.Kinds
}

var (
	_ device.Device         = (*Device)(nil)
	_ device.ForeignStreams = (*Device)(nil)
	_ device.ValueReader    = (*Device)(nil)
)

func (d *Device) k() *Kind          { return &d.g.r.t.Kinds[d.kind] }
func (d *Device) sym() *kindSymbols { return &d.g.r.kinds[d.kind] }

// Ordinal is the runtime's device ordinal (what cudaSetDevice takes).
func (d *Device) Ordinal() int { return d.g.ordinal }

// Attribute is the value of a device attribute read at probe (one of the
// table's Attributes; 0 for others).
func (d *Device) Attribute(attr int) int {
	if i := slices.Index(d.g.r.t.Attributes, attr); i >= 0 {
		return d.g.attrs[i]
	}
	return 0
}

// ErrorName is the runtime's name for an error code, e.g.
// "cudaErrorMemoryAllocation" ("CUDA_ERROR_OUT_OF_MEMORY" through the
// driver API).
func (d *Device) ErrorName(code int) string { return d.g.r.ErrorName(code) }

// DefaultStream is the stream handle a nil device.Stream stands for.
func (d *Device) DefaultStream() uintptr { return d.g.stream }

func (d *Device) Type() abi.DeviceType { return d.k().Type }
func (d *Device) ID() int64            { return int64(d.g.ordinal) }
func (d *Device) String() string       { return fmt.Sprintf("%s:%d", d.k().Type, d.g.ordinal) }

func (d *Device) Name() string {
	switch d.k().Memory {
	case HostMemory:
		return d.g.name + " (pinned host memory)"
	case ManagedMemory:
		return d.g.name + " (managed memory)"
	}
	return d.g.name
}

// IsCPU reports whether the GPU is the host's own processors (see
// Table.HostCPU); the loader then does not make it the default.
func (d *Device) IsCPU() bool { return d.g.hostCPU }

// HostAccessible: pinned host memory is, device memory is not (but on a
// GPU that is the host's own processors, IsCPU, whose device memory is the
// host's), and managed memory is where the GPU allows the host to touch it
// while kernels run (Table.ConcurrentManagedAttr, read at probe); where it
// does not, the host must not touch managed memory while the GPU is busy at
// all, even after the array's event, so importers read it through copies.
func (d *Device) HostAccessible() bool {
	switch d.k().Memory {
	case HostMemory:
		return true
	case DeviceMemory:
		return d.g.hostCPU
	case ManagedMemory:
		a := d.g.r.t.ConcurrentManagedAttr
		return a == 0 || d.Attribute(a) != 0
	}
	return false
}

// usable is nil, or why the library cannot allocate this kind of memory
// (an optional kind whose functions it lacks).
func (d *Device) usable() error {
	if m := d.sym().missing; len(m) > 0 {
		return fmt.Errorf("%w: %s lacks %s: this %s runtime offers no %s", device.ErrMissingSymbol,
			d.g.r.lib.Path(), strings.Join(m, ", "), d.g.r.t.Title, d.k().Memory)
	}
	return nil
}

func (d *Device) Alloc(size int) (device.Pointer, error) {
	if size <= 0 {
		return 0, fmt.Errorf("%w: %v: Alloc(%d): size must be positive", device.ErrInvalid, d, size)
	}
	if err := d.usable(); err != nil {
		return 0, fmt.Errorf("%v: Alloc(%d): %w", d, size, err)
	}
	o := newOut()
	defer o.release()
	err := d.g.on(func() error {
		return d.g.r.call(d.sym().alloc, append([]uintptr{o.ptr(0), uintptr(size)}, d.k().AllocArgs...)...)
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
	if err := d.usable(); err != nil {
		return fmt.Errorf("%v: Free(%#x): %w", d, uintptr(p), err)
	}
	if err := d.g.on(func() error { return d.g.r.call(d.sym().free, uintptr(p)) }); err != nil {
		return fmt.Errorf("%v: Free(%#x): %w", d, uintptr(p), err)
	}
	return nil
}

// memcpyKind: explicit for device memory; host and managed memory are
// addressed by unified virtual addresses, and an explicit direction that
// does not match the pointers is undefined, so the runtime infers it.
func (d *Device) memcpyKind(explicit uintptr) uintptr {
	if d.k().Memory != DeviceMemory {
		return d.g.r.t.Memcpy.Default
	}
	return explicit
}

func (d *Device) CopyToDevice(dst device.Pointer, off int, src []byte, s device.Stream) error {
	if len(src) == 0 {
		return nil
	}
	if dst == 0 || off < 0 {
		return fmt.Errorf("%w: %v: CopyToDevice(%#x, %d): bad destination", device.ErrInvalid, d, uintptr(dst), off)
	}
	return d.memcpy("CopyToDevice", uintptr(dst)+uintptr(off), uintptr(unsafe.Pointer(&src[0])), len(src),
		d.g.r.t.Memcpy.HostToDevice, s, &src[0])
}

func (d *Device) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if len(dst) == 0 {
		return nil
	}
	if src == 0 || off < 0 {
		return fmt.Errorf("%w: %v: CopyToHost(%#x, %d): bad source", device.ErrInvalid, d, uintptr(src), off)
	}
	return d.memcpy("CopyToHost", uintptr(unsafe.Pointer(&dst[0])), uintptr(src)+uintptr(off), len(dst),
		d.g.r.t.Memcpy.DeviceToHost, s, &dst[0])
}

func (d *Device) CopyOnDevice(dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream) error {
	if n == 0 {
		return nil
	}
	if dst == 0 || src == 0 || dstOff < 0 || srcOff < 0 || n < 0 {
		return fmt.Errorf("%w: %v: CopyOnDevice(%#x+%d, %#x+%d, %d): bad argument", device.ErrInvalid, d, uintptr(dst), dstOff, uintptr(src), srcOff, n)
	}
	return d.memcpy("CopyOnDevice", uintptr(dst)+uintptr(dstOff), uintptr(src)+uintptr(srcOff), n,
		d.g.r.t.Memcpy.DeviceToDevice, s, nil)
}

// memcpy queues MemcpyAsync. goMem is the Go end of the copy, pinned for
// the call (which also keeps it off the stack: a stack may move).
func (d *Device) memcpy(op string, dst, src uintptr, n int, kind uintptr, s device.Stream, goMem *byte) error {
	var pin runtime.Pinner
	if goMem != nil {
		pin.Pin(goMem)
		defer pin.Unpin()
	}
	err := d.g.withStream(s, func(h uintptr) error {
		return d.g.on(func() error {
			return d.g.r.memcpy(dst, src, uintptr(n), d.memcpyKind(kind), h)
		})
	})
	if err != nil {
		return fmt.Errorf("%v: %s of %d bytes: %w", d, op, n, err)
	}
	return nil
}

// NewStream returns a non-blocking stream of this GPU, usable with every
// kind of memory of it.
func (d *Device) NewStream() (device.Stream, error) {
	var h uintptr
	err := d.g.on(func() (err error) { h, err = d.g.r.newStream(); return err })
	if err != nil {
		return nil, fmt.Errorf("%v: NewStream: %w", d, err)
	}
	return &Stream{g: d.g, h: h}, nil
}

// NewEvent returns an event without timing.
func (d *Device) NewEvent() (device.Event, error) {
	// The event handle lives off the Go heap: SyncEvent hands C its address.
	slot, err := cCalloc(unsafe.Sizeof(uintptr(0)))
	if err != nil {
		return nil, fmt.Errorf("%v: NewEvent: %w", d, err)
	}
	err = d.g.on(func() error { return d.g.r.Call(EventCreateWithFlags, uintptr(slot), d.g.r.t.EventDisableTiming) })
	if err != nil {
		ffi.Free(slot)
		return nil, fmt.Errorf("%v: NewEvent: %w", d, err)
	}
	return &Event{g: d.g, slot: slot}, nil
}

// WaitSyncEvent waits for the event that syncEvent (a cudaEvent_t* or
// hipEvent_t*, as ArrowDeviceArray.sync_event) points to: on the host when
// s is nil, else by making s wait for it without blocking the host.
func (d *Device) WaitSyncEvent(ctx context.Context, syncEvent uintptr, s device.Stream) error {
	var err error
	if hostWaits(s) {
		err = d.waitEvent(ctx, syncEvent, nil)
	} else {
		err = d.g.withStream(s, func(h uintptr) error { return d.waitEvent(ctx, syncEvent, &h) })
	}
	if err != nil {
		return fmt.Errorf("%v: WaitSyncEvent: %w", d, err)
	}
	return nil
}

// MakeStreamWait makes the runtime stream foreign (a cudaStream_t or
// hipStream_t of this GPU; 0 is the legacy default stream) wait for the
// event that syncEvent points to, without blocking the host
// (device.ForeignStreams).
func (d *Device) MakeStreamWait(foreign, syncEvent uintptr) error {
	if err := d.waitEvent(context.Background(), syncEvent, &foreign); err != nil {
		return fmt.Errorf("%v: MakeStreamWait(%#x): %w", d, foreign, err)
	}
	return nil
}

// WaitForStream makes s (nil: the host) wait for the work queued so far on
// the runtime stream foreign, a cudaStream_t or hipStream_t of this GPU (0
// is the legacy default stream): the host synchronizes it, or an event of
// our own recorded on it is what s waits for (device.ForeignStreams).
func (d *Device) WaitForStream(foreign uintptr, s device.Stream) error {
	var err error
	if hostWaits(s) {
		err = d.g.on(func() error { return d.g.r.Call(StreamSynchronize, foreign) })
	} else {
		err = d.g.withStream(s, func(h uintptr) error {
			return d.g.on(func() error { return d.g.streamAfter(h, foreign) })
		})
	}
	if err != nil {
		return fmt.Errorf("%v: WaitForStream(%#x): %w", d, foreign, err)
	}
	return nil
}

// streamAfter makes stream h wait for the work queued so far on stream
// foreign, through an event made for it and destroyed at once (the wait
// keeps what it needs). The GPU must be current.
func (g *gpu) streamAfter(h, foreign uintptr) error {
	r := g.r
	ev, err := r.newEvent()
	if err != nil {
		return err
	}
	err = r.Call(EventRecord, ev, foreign)
	if err == nil {
		err = r.Call(StreamWaitEvent, h, ev, 0)
	}
	if derr := r.destroy(EventDestroy, ev); err == nil {
		err = derr
	}
	return err
}

// hostWaits reports whether s is nil, as an interface or a *Stream: the
// host waits.
func hostWaits(s device.Stream) bool {
	st, ok := s.(*Stream)
	return s == nil || ok && st == nil
}

// MemoryInfo is the GPU's free and total memory. Pinned host memory is
// host RAM, which the runtime does not report: zeros.
func (d *Device) MemoryInfo() (free, total int64, err error) {
	if d.k().Memory == HostMemory {
		return 0, 0, nil
	}
	o := newOut()
	defer o.release()
	if err := d.g.on(func() error { return d.g.r.Call(MemGetInfo, o.ptr(0), o.ptr(1)) }); err != nil {
		return 0, 0, fmt.Errorf("%v: MemoryInfo: %w", d, err)
	}
	return int64(o.uintptr(0)), int64(o.uintptr(1)), nil
}

// A Stream is a non-blocking stream of one GPU. Close excludes every other
// use, so no call runs on a destroyed stream.
type Stream struct {
	g  *gpu
	mu sync.RWMutex
	h  uintptr // 0 once closed
}

func (s *Stream) Handle() uintptr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.h
}

func (s *Stream) Synchronize() error {
	return s.g.withStream(s, func(h uintptr) error {
		return s.g.on(func() error { return s.g.r.Call(StreamSynchronize, h) })
	})
}

// Close destroys the stream; work already queued still completes. A second
// Close does nothing.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return nil
	}
	if err := s.g.on(func() error { return s.g.r.Call(StreamDestroy, s.h) }); err != nil {
		return err
	}
	s.h = 0
	return nil
}

// An Event keeps its handle in C memory, so that its address can be a
// sync_event. Close excludes every other use.
type Event struct {
	g    *gpu
	mu   sync.RWMutex
	slot unsafe.Pointer // nil once closed
}

// use runs f with the event's handle, unless the event is closed.
func (e *Event) use(f func(ev uintptr) error) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.slot == nil {
		return e.g.closed("event")
	}
	return f(*(*uintptr)(e.slot))
}

// Record marks the point after the work queued on s (nil: the default
// stream) so far.
func (e *Event) Record(s device.Stream) error {
	return e.use(func(ev uintptr) error {
		return e.g.withStream(s, func(h uintptr) error {
			return e.g.on(func() error { return e.g.r.Call(EventRecord, ev, h) })
		})
	})
}

func (e *Event) Synchronize() error {
	return e.use(func(ev uintptr) error {
		return e.g.on(func() error { return e.g.r.Call(EventSynchronize, ev) })
	})
}

// SyncEvent is the cudaEvent_t* / hipEvent_t*, valid until Close; 0 after.
func (e *Event) SyncEvent() uintptr {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return uintptr(e.slot)
}

// Close destroys the event and frees its slot; after a failed destroy the
// event stays whole, to close again.
func (e *Event) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot == nil {
		return nil
	}
	if err := e.g.on(func() error { return e.g.r.Call(EventDestroy, *(*uintptr)(e.slot)) }); err != nil {
		return err
	}
	ffi.Free(e.slot)
	e.slot = nil
	return nil
}
