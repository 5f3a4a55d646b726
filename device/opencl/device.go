package opencl

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/hostwait"
)

// A Device is one OpenCL device with its own context and default in-order
// command queue.
type Device struct {
	*api
	id                    int64
	platform, device      uintptr
	context, queue        uintptr
	name, vendor, version string
	clType, svmCaps       uint64
	globalMem             int64
	svm, cl2              bool

	mu      sync.Mutex
	allocs  map[device.Pointer]int // ours, with sizes: Free and bounds checks
	imports uintptr                // ReadValues' command queue, made at its first call

	qmu     sync.RWMutex // held (read) while Free finishes the queues
	streams map[*stream]struct{}
}

var (
	_ device.Device         = (*Device)(nil)
	_ device.ForeignStreams = (*Device)(nil)
)

func (*Device) Type() abi.DeviceType { return abi.DeviceOpenCL }
func (d *Device) ID() int64          { return d.id }

// Name is CL_DEVICE_NAME.
func (d *Device) Name() string { return d.name }

// Vendor is CL_DEVICE_VENDOR.
func (d *Device) Vendor() string { return d.vendor }

// Version is CL_DEVICE_VERSION ("OpenCL <major>.<minor> <vendor info>").
func (d *Device) Version() string { return d.version }

// UsesSVM reports whether this device's Pointers are coarse-grain SVM
// pointers (true) or cl_mem handles (false).
func (d *Device) UsesSVM() bool { return d.svm }

// SVMCapabilities is CL_DEVICE_SVM_CAPABILITIES (0 before OpenCL 2.0).
func (d *Device) SVMCapabilities() uint64 { return d.svmCaps }

// For interop with C code that must share our objects (a cl_mem or cl_event
// is only usable in the context it was made in):

// Context returns the device's cl_context.
func (d *Device) Context() uintptr { return d.context }

// CommandQueue returns the device's default cl_command_queue.
func (d *Device) CommandQueue() uintptr { return d.queue }

// CLDevice returns the cl_device_id.
func (d *Device) CLDevice() uintptr { return d.device }

// Platform returns the cl_platform_id.
func (d *Device) Platform() uintptr { return d.platform }

// HostAccessible is true only for SVM on a CPU device: there the SVM pointer
// is ordinary host memory.
func (d *Device) HostAccessible() bool { return d.svm && d.IsCPU() }

// IsCPU reports whether the device is a CL_DEVICE_TYPE_CPU device: OpenCL
// run on the host's own processors (PoCL's pthread device, for one). Its
// copies go through the OpenCL runtime at a fraction of the speed of the
// CPU device's, so the loader does not make it the default on its own.
func (d *Device) IsCPU() bool { return d.clType&clDeviceTypeCPU != 0 }

// MemoryInfo reports CL_DEVICE_GLOBAL_MEM_SIZE as total and, since OpenCL
// cannot tell free memory, as free too.
func (d *Device) MemoryInfo() (free, total int64, err error) { return d.globalMem, d.globalMem, nil }

func (d *Device) String() string { return fmt.Sprintf("opencl:%d (%s)", d.id, d.name) }

// errorf is an error of this device wrapping sentinel (device.ErrInvalid
// for a bad argument, device.ErrReleased for a closed stream or event).
func (d *Device) errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: opencl:%d: %s", sentinel, d.id, fmt.Sprintf(format, args...))
}

func (d *Device) Alloc(size int) (device.Pointer, error) {
	if size <= 0 {
		return 0, d.errorf(device.ErrInvalid, "Alloc(%d): size must be positive", size)
	}
	var p uintptr
	if d.svm {
		args := ffi.AppendUint64([]uintptr{d.context}, clMemReadWrite)
		p = ffi.Call(d.svmAlloc, append(args, uintptr(size), 0)...)
		if p == 0 {
			return 0, &device.RuntimeError{Runtime: "opencl", Call: "clSVMAlloc", Code: -4,
				Message: fmt.Sprintf("CL_MEM_OBJECT_ALLOCATION_FAILURE (NULL for %d bytes)", size)}
		}
	} else {
		errcode, err := calloc(4)
		if err != nil {
			return 0, err
		}
		defer errcode.free()
		args := ffi.AppendUint64([]uintptr{d.context}, clMemReadWrite)
		p = ffi.Call(d.createBuffer, append(args, uintptr(size), 0, errcode.addr())...)
		if p == 0 {
			return 0, clError("clCreateBuffer", errcode.int32())
		}
	}
	d.mu.Lock()
	d.allocs[device.Pointer(p)] = size
	d.mu.Unlock()
	return device.Pointer(p), nil
}

// Free releases memory from Alloc; any other pointer is an error, never a
// call into the runtime (a bogus cl_mem would crash the ICD loader). SVM is
// freed immediately by clSVMFree, so queued work is finished first; a cl_mem
// lives on until the commands using it are done.
func (d *Device) Free(p device.Pointer) error {
	d.mu.Lock()
	_, ok := d.allocs[p]
	delete(d.allocs, p)
	d.mu.Unlock()
	if !ok {
		return d.errorf(device.ErrInvalid, "Free(%#x): not allocated by this device", uintptr(p))
	}
	if !d.svm {
		return check("clReleaseMemObject", ffi.Call(d.releaseMemObject, uintptr(p)))
	}
	d.qmu.RLock()
	defer d.qmu.RUnlock()
	if err := check("clFinish", ffi.Call(d.finish, d.queue)); err != nil {
		return err
	}
	d.mu.Lock()
	imports := d.imports
	d.mu.Unlock()
	if imports != 0 {
		if err := check("clFinish", ffi.Call(d.finish, imports)); err != nil {
			return err
		}
	}
	for s := range d.streams {
		if err := check("clFinish", ffi.Call(d.finish, s.q.Load())); err != nil {
			return err
		}
	}
	ffi.Call(d.svmFree, d.context, uintptr(p))
	return nil
}

// checkRange validates a copy's range against our own allocations; memory
// from elsewhere (imported from C) cannot be checked and is passed through.
func (d *Device) checkRange(op string, p device.Pointer, off, n int) error {
	if p == 0 {
		return d.errorf(device.ErrInvalid, "%s: NULL device pointer", op)
	}
	if off < 0 || n < 0 {
		return d.errorf(device.ErrInvalid, "%s: negative offset %d or size %d", op, off, n)
	}
	d.mu.Lock()
	size, ok := d.allocs[p]
	d.mu.Unlock()
	if ok && off+n > size {
		return d.errorf(device.ErrInvalid, "%s: [%d, %d) is outside the %d-byte buffer %#x", op, off, off+n, size, uintptr(p))
	}
	return nil
}

// queueFor returns the command queue of s: nil (or a stream with no handle,
// such as the CPU's) means the default queue.
func (d *Device) queueFor(s device.Stream) (uintptr, error) {
	switch s := s.(type) {
	case nil:
		return d.queue, nil
	case *stream:
		if s.d != d {
			return 0, d.errorf(device.ErrInvalid, "stream of %v used on this device", s.d)
		}
		q := s.q.Load()
		if q == 0 {
			return 0, d.errorf(device.ErrReleased, "stream is closed")
		}
		return q, nil
	}
	if s.Handle() == 0 {
		return d.queue, nil
	}
	return 0, d.errorf(device.ErrInvalid, "not an OpenCL stream (%T)", s)
}

func hostAddr(b []byte) uintptr {
	escape(&b[0])
	return uintptr(unsafe.Pointer(&b[0]))
}

func (d *Device) CopyToDevice(dst device.Pointer, off int, src []byte, s device.Stream) error {
	if err := d.checkRange("CopyToDevice", dst, off, len(src)); err != nil || len(src) == 0 {
		return err
	}
	q, err := d.queueFor(s)
	if err != nil {
		return err
	}
	h := hostAddr(src)
	if d.svm {
		err = check("clEnqueueSVMMemcpy", ffi.Call(d.enqueueSVMMemcpy, q, clFalse,
			uintptr(dst)+uintptr(off), h, uintptr(len(src)), 0, 0, 0))
	} else {
		err = check("clEnqueueWriteBuffer", ffi.Call(d.enqueueWriteBuffer, q, uintptr(dst), clFalse,
			uintptr(off), uintptr(len(src)), h, 0, 0, 0))
	}
	runtime.KeepAlive(src)
	return err
}

func (d *Device) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if err := d.checkRange("CopyToHost", src, off, len(dst)); err != nil || len(dst) == 0 {
		return err
	}
	q, err := d.queueFor(s)
	if err != nil {
		return err
	}
	h := hostAddr(dst)
	if d.svm {
		err = check("clEnqueueSVMMemcpy", ffi.Call(d.enqueueSVMMemcpy, q, clFalse,
			h, uintptr(src)+uintptr(off), uintptr(len(dst)), 0, 0, 0))
	} else {
		err = check("clEnqueueReadBuffer", ffi.Call(d.enqueueReadBuffer, q, uintptr(src), clFalse,
			uintptr(off), uintptr(len(dst)), h, 0, 0, 0))
	}
	runtime.KeepAlive(dst)
	return err
}

func (d *Device) CopyOnDevice(dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream) error {
	if err := d.checkRange("CopyOnDevice", dst, dstOff, n); err != nil {
		return err
	}
	if err := d.checkRange("CopyOnDevice", src, srcOff, n); err != nil || n == 0 {
		return err
	}
	q, err := d.queueFor(s)
	if err != nil {
		return err
	}
	if d.svm {
		return check("clEnqueueSVMMemcpy", ffi.Call(d.enqueueSVMMemcpy, q, clFalse,
			uintptr(dst)+uintptr(dstOff), uintptr(src)+uintptr(srcOff), uintptr(n), 0, 0, 0))
	}
	return check("clEnqueueCopyBuffer", ffi.Call(d.enqueueCopyBuffer, q, uintptr(src), uintptr(dst),
		uintptr(srcOff), uintptr(dstOff), uintptr(n), 0, 0, 0))
}

// A stream is a command queue of its own on the device's context.
type stream struct {
	d *Device
	q atomic.Uintptr // 0 once closed
}

func (d *Device) NewStream() (device.Stream, error) {
	q, err := d.newQueue(d.context, d.device, d.cl2)
	if err != nil {
		return nil, err
	}
	s := &stream{d: d}
	s.q.Store(q)
	d.qmu.Lock()
	d.streams[s] = struct{}{}
	d.qmu.Unlock()
	return s, nil
}

// Handle is the cl_command_queue.
func (s *stream) Handle() uintptr { return s.q.Load() }

func (s *stream) Synchronize() error {
	q := s.q.Load()
	if q == 0 {
		return s.d.errorf(device.ErrReleased, "stream is closed")
	}
	return check("clFinish", ffi.Call(s.d.finish, q))
}

// Close releases the queue (OpenCL finishes its commands first).
func (s *stream) Close() error {
	s.d.qmu.Lock()
	q := s.q.Swap(0)
	delete(s.d.streams, s)
	s.d.qmu.Unlock()
	if q == 0 {
		return nil
	}
	return check("clReleaseCommandQueue", ffi.Call(s.d.releaseCommandQueue, q))
}

// An event owns a cl_event slot in C memory: SyncEvent is its address, a
// cl_event* as ArrowDeviceArray.sync_event wants.
type event struct {
	d    *Device
	mu   sync.Mutex
	slot cmem // nil once closed
}

func (d *Device) NewEvent() (device.Event, error) {
	slot, err := calloc(wordSize)
	if err != nil {
		return nil, err
	}
	return &event{d: d, slot: slot}, nil
}

// Record enqueues a marker after the work queued on s so far; the event of an
// earlier Record is released. The queue is flushed so that a waiter on
// another queue or thread sees progress.
func (e *event) Record(s device.Stream) error {
	q, err := e.d.queueFor(s)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot.p == nil {
		return e.d.errorf(device.ErrReleased, "event is closed")
	}
	if old := e.slot.word(0); old != 0 {
		e.slot.setWord(0, 0)
		if err := check("clReleaseEvent", ffi.Call(e.d.releaseEvent, old)); err != nil {
			return err
		}
	}
	return e.d.mark(q, e.slot)
}

// mark enqueues a marker after the work queued on q so far, its cl_event
// into slot, and flushes q so that a waiter on another queue or thread sees
// progress.
func (d *Device) mark(q uintptr, slot cmem) error {
	if err := check("clEnqueueMarkerWithWaitList", ffi.Call(d.enqueueMarkerWithWaitList, q, 0, 0, slot.addr())); err != nil {
		return err
	}
	return check("clFlush", ffi.Call(d.flush, q))
}

// Synchronize waits for the recorded marker; an event never recorded has
// nothing to wait for.
func (e *event) Synchronize() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot.p == nil {
		return e.d.errorf(device.ErrReleased, "event is closed")
	}
	if e.slot.word(0) == 0 {
		return nil
	}
	return check("clWaitForEvents", ffi.Call(e.d.waitForEvents, 1, e.slot.addr()))
}

func (e *event) SyncEvent() uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.slot.addr()
}

func (e *event) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slot.p == nil {
		return nil
	}
	var err error
	if ev := e.slot.word(0); ev != 0 {
		err = check("clReleaseEvent", ffi.Call(e.d.releaseEvent, ev))
	}
	e.slot.free()
	e.slot.p = nil
	return err
}

// WaitSyncEvent waits for the cl_event behind syncEvent (a cl_event*; NULL,
// or a pointer to a NULL event, means nothing to wait for): on the host when
// s is nil, else as a barrier on s's queue. An event of another context
// cannot enter our queue's wait list, so it is waited for on the host.
func (d *Device) WaitSyncEvent(ctx context.Context, syncEvent uintptr, s device.Stream) error {
	if syncEvent == 0 || *(*uintptr)(abi.Pointer(syncEvent)) == 0 {
		return nil
	}
	if s == nil {
		return d.hostWait(ctx, syncEvent)
	}
	q, err := d.queueFor(s)
	if err != nil {
		return err
	}
	return d.barrier(q, syncEvent)
}

// hostWait waits on the host for the cl_event at syncEvent; while ctx can
// be done it polls the event's status instead of blocking in
// clWaitForEvents, which no one could interrupt.
func (d *Device) hostWait(ctx context.Context, syncEvent uintptr) error {
	ev := *(*uintptr)(abi.Pointer(syncEvent))
	var status cmem // written by C: off the Go heap
	defer func() {
		if status.p != nil {
			status.free()
		}
	}()
	return hostwait.Until(ctx, func() (bool, error) {
		if status.p == nil {
			var err error
			if status, err = calloc(wordSize); err != nil {
				return false, err
			}
		}
		if err := check("clGetEventInfo", ffi.Call(d.getEventInfo, ev, clEventExecutionStatus, 4, status.addr(), 0)); err != nil {
			return false, err
		}
		switch st := status.int32(); {
		case st == clComplete:
			return true, nil
		case st < 0: // the command ended abnormally: its error code
			return false, clError("event", st)
		}
		return false, nil
	}, func() error { return check("clWaitForEvents", ffi.Call(d.waitForEvents, 1, syncEvent)) })
}

// MakeStreamWait makes the command queue foreign wait for the cl_event
// behind syncEvent, as a barrier on it (device.ForeignStreams). A queue of
// another context cannot have our event in its wait list: the host waits
// for it then.
func (d *Device) MakeStreamWait(foreign, syncEvent uintptr) error {
	if syncEvent == 0 || *(*uintptr)(abi.Pointer(syncEvent)) == 0 {
		return nil
	}
	if foreign == 0 {
		return d.errorf(device.ErrInvalid, "MakeStreamWait: NULL command queue")
	}
	return d.barrier(foreign, syncEvent)
}

// barrier makes queue q wait for the cl_event at syncEvent, or, when the
// event is of another context than q, the host.
func (d *Device) barrier(q, syncEvent uintptr) error {
	r := int32(ffi.Call(d.enqueueBarrierWithWaitList, q, 1, syncEvent, 0))
	if r == clInvalidContext {
		return check("clWaitForEvents", ffi.Call(d.waitForEvents, 1, syncEvent))
	}
	if r != clSuccess {
		return clError("clEnqueueBarrierWithWaitList", r)
	}
	return nil
}

// WaitForStream makes s (nil: the host) wait for the work queued so far on
// the command queue foreign, through a marker enqueued on it
// (device.ForeignStreams). A queue of another context is waited for on the
// host.
func (d *Device) WaitForStream(foreign uintptr, s device.Stream) error {
	if foreign == 0 {
		return d.errorf(device.ErrInvalid, "WaitForStream: NULL command queue")
	}
	slot, err := calloc(wordSize)
	if err != nil {
		return err
	}
	defer slot.free()
	if err := d.mark(foreign, slot); err != nil {
		if ev := slot.word(0); ev != 0 {
			ffi.Call(d.releaseEvent, ev)
		}
		return err
	}
	err = d.WaitSyncEvent(context.Background(), slot.addr(), s)
	if rerr := check("clReleaseEvent", ffi.Call(d.releaseEvent, slot.word(0))); err == nil {
		err = rerr
	}
	return err
}

// release gives back the context and queue of a device whose probe failed.
func (d *Device) release() {
	ffi.Call(d.releaseCommandQueue, d.queue)
	ffi.Call(d.releaseContext, d.context)
}
