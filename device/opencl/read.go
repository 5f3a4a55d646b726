package opencl

import (
	"context"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

var _ device.ValueReader = (*Device)(nil)

// ReadValues reads small values from the device's memory, what an import
// needs to size its buffers (device.ValueReader), with one wait however
// many there are: each value read without blocking into C memory on the
// device's import queue (made at the first import, kept with the
// device), the first behind the producers' events in its wait list, the
// last read blocking, which in an in-order queue returns once all are
// done. With a ctx that can be done the host waits for the events first,
// polling them, so that ctx bounds the wait; events of another context,
// which a wait list cannot hold, are waited for on the host too.
func (d *Device) ReadValues(ctx context.Context, syncEvents []uintptr, reads []device.ValueRead) error {
	for _, r := range reads {
		if r.Width != 2 && r.Width != 4 && r.Width != 8 {
			return d.errorf(device.ErrInvalid, "ReadValues: a read of %d bytes", r.Width)
		}
		if err := d.checkRange("ReadValues", r.Ptr, int(r.Off), r.Width); err != nil {
			return err
		}
	}
	var evs []uintptr // the cl_events behind syncEvents
	for _, se := range syncEvents {
		if se != 0 && *(*uintptr)(abi.Pointer(se)) != 0 {
			evs = append(evs, *(*uintptr)(abi.Pointer(se)))
		}
	}
	hostWaits := func(ctx context.Context) error {
		for _, se := range syncEvents {
			if err := d.WaitSyncEvent(ctx, se, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if len(reads) == 0 || len(evs) > 0 && ctx.Done() != nil {
		if err := hostWaits(ctx); err != nil || len(reads) == 0 {
			return err
		}
		evs = nil
	}
	q, err := d.importQueue()
	if err != nil {
		return err
	}
	// The values, then the wait list (cl_events in a row, as OpenCL takes it).
	buf, err := calloc(uintptr(8*len(reads)) + wordSize*uintptr(len(evs)))
	if err != nil {
		return err
	}
	defer buf.free()
	list := unsafe.Add(buf.p, 8*len(reads))
	for i, ev := range evs {
		*(*uintptr)(unsafe.Add(list, wordSize*uintptr(i))) = ev
	}
	wait := len(evs)
	for i, r := range reads {
		blocking := uintptr(clFalse)
		if i == len(reads)-1 {
			blocking = clTrue
		}
		err := d.readInto(q, unsafe.Add(buf.p, 8*i), r, blocking, wait, uintptr(list))
		if i == 0 && wait > 0 && isCode(err, clInvalidContext) {
			// An event of another context: the host waits for them.
			if err = hostWaits(context.Background()); err == nil {
				err = d.readInto(q, buf.p, r, blocking, 0, 0)
			}
		}
		if err != nil {
			ffi.Call(d.finish, q) // what was queued may still write buf
			return err
		}
		wait = 0
	}
	host := unsafe.Slice((*byte)(buf.p), 8*len(reads))
	for i := range reads {
		reads[i].Set(host[8*i:])
	}
	return nil
}

// readInto queues the read of r into dst on q, after the n events at
// list.
func (d *Device) readInto(q uintptr, dst unsafe.Pointer, r device.ValueRead, blocking uintptr, n int, list uintptr) error {
	if n == 0 {
		list = 0
	}
	if d.svm {
		return check("clEnqueueSVMMemcpy", ffi.Call(d.enqueueSVMMemcpy, q, blocking,
			uintptr(dst), uintptr(r.Ptr)+uintptr(r.Off), uintptr(r.Width), uintptr(n), list, 0))
	}
	return check("clEnqueueReadBuffer", ffi.Call(d.enqueueReadBuffer, q, uintptr(r.Ptr), blocking,
		uintptr(r.Off), uintptr(r.Width), uintptr(dst), uintptr(n), list, 0))
}

// importQueue is the device's queue for ReadValues, made at the first call.
func (d *Device) importQueue() (uintptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.imports == 0 {
		q, err := d.newQueue(d.context, d.device, d.cl2)
		if err != nil {
			return 0, err
		}
		d.imports = q
	}
	return d.imports, nil
}
