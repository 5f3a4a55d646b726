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
// device), the first behind the producer's event in its wait list, the
// last read blocking, which in an in-order queue returns once all are
// done. With a ctx that can be done the host waits for the event first,
// polling it, so that ctx bounds the wait; an event of another context,
// which a wait list cannot hold, is waited for on the host too.
func (d *Device) ReadValues(ctx context.Context, syncEvent uintptr, reads []device.ValueRead) error {
	for _, r := range reads {
		if r.Width != 2 && r.Width != 4 && r.Width != 8 {
			return d.errorf(device.ErrInvalid, "ReadValues: a read of %d bytes", r.Width)
		}
		if err := d.checkRange("ReadValues", r.Ptr, int(r.Off), r.Width); err != nil {
			return err
		}
	}
	waitList := syncEvent
	if syncEvent == 0 || *(*uintptr)(abi.Pointer(syncEvent)) == 0 {
		waitList = 0
	}
	if len(reads) == 0 || waitList != 0 && ctx.Done() != nil {
		if err := d.WaitSyncEvent(ctx, syncEvent, nil); err != nil || len(reads) == 0 {
			return err
		}
		waitList = 0
	}
	q, err := d.importQueue()
	if err != nil {
		return err
	}
	buf, err := calloc(uintptr(8 * len(reads)))
	if err != nil {
		return err
	}
	defer buf.free()
	for i, r := range reads {
		blocking := uintptr(clFalse)
		if i == len(reads)-1 {
			blocking = clTrue
		}
		err := d.readInto(q, unsafe.Add(buf.p, 8*i), r, blocking, waitList)
		if i == 0 && waitList != 0 && isCode(err, clInvalidContext) {
			// The event is another context's: the host waits for it.
			if err = d.hostWait(context.Background(), waitList); err == nil {
				err = d.readInto(q, buf.p, r, blocking, 0)
			}
		}
		if err != nil {
			ffi.Call(d.finish, q) // what was queued may still write buf
			return err
		}
		waitList = 0
	}
	host := unsafe.Slice((*byte)(buf.p), 8*len(reads))
	for i := range reads {
		reads[i].Set(host[8*i:])
	}
	return nil
}

// readInto queues the read of r into dst on q, after the event at
// waitList (a cl_event*; 0: none).
func (d *Device) readInto(q uintptr, dst unsafe.Pointer, r device.ValueRead, blocking, waitList uintptr) error {
	n := uintptr(0)
	if waitList != 0 {
		n = 1
	}
	if d.svm {
		return check("clEnqueueSVMMemcpy", ffi.Call(d.enqueueSVMMemcpy, q, blocking,
			uintptr(dst), uintptr(r.Ptr)+uintptr(r.Off), uintptr(r.Width), n, waitList, 0))
	}
	return check("clEnqueueReadBuffer", ffi.Call(d.enqueueReadBuffer, q, uintptr(r.Ptr), blocking,
		uintptr(r.Off), uintptr(r.Width), uintptr(dst), n, waitList, 0))
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
