package cai

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// A StreamWaiter is a device that can wait for work on a runtime stream it
// did not create. Import uses it when a descriptor names a stream. A device
// that does not implement it is waited through the CUDA runtime that
// package device/cuda loaded, when it is one of that backend's devices.
type StreamWaiter interface {
	// WaitStream makes s wait, without blocking the host, for the work
	// queued so far on the stream that the CAI stream value names (1: the
	// legacy default stream, 2: the per-thread default stream, other
	// values: a cudaStream_t); with s nil the host waits.
	WaitStream(stream uintptr, s device.Stream) error
}

// waitStream makes s (nil: the host) wait for the work queued on the CAI
// stream value v of dev.
func waitStream(ctx context.Context, dev device.Device, v int64, s device.Stream) error {
	if w, ok := dev.(StreamWaiter); ok {
		return w.WaitStream(uintptr(v), s)
	}
	r, ord, err := cudartOf(ctx, dev)
	if err != nil {
		return err
	}
	if s == nil {
		return r.synchronize(ord, uintptr(v))
	}
	// An event of our own, recorded on the producer's stream through the
	// runtime, which s then waits for through the device's own API.
	ev, err := dev.NewEvent()
	if err != nil {
		return err
	}
	defer ev.Close()
	slot := ev.SyncEvent()
	if slot == 0 {
		return fmt.Errorf("cai: %v: an event without a handle", dev)
	}
	if err := r.record(ord, *(*uintptr)(abi.Pointer(slot)), uintptr(v)); err != nil {
		return err
	}
	return dev.WaitSyncEvent(slot, s)
}

// gpurtDevice is what the CUDA backend's devices have beyond device.Device.
type gpurtDevice interface {
	device.Device
	Ordinal() int
	DefaultStream() uintptr
}

// cudart is the libcudart that device/cuda loaded, bound again for the
// three calls that waiting on a foreign stream needs, which the backend's
// Device does not offer.
type cudart struct {
	path                                       string
	setDevice, streamSync, eventRecord, errStr uintptr
}

var cudarts sync.Map // library path → *cudart

// cudartOf returns the runtime of dev, a device of the registered "cuda"
// backend, and its ordinal. The backend was probed already: it registered
// dev.
func cudartOf(ctx context.Context, dev device.Device) (*cudart, int, error) {
	g, ok := dev.(gpurtDevice)
	if !ok {
		return nil, 0, unsupportedf("%v (%T) cannot wait for a CUDA stream: it is not a device of the CUDA backend and has no WaitStream", dev, dev)
	}
	for _, b := range device.Backends() {
		if b.Name() != "cuda" {
			continue
		}
		info, err := b.Probe(ctx)
		if err != nil || !slices.Contains(info.Devices, device.Device(g)) {
			continue
		}
		if r, ok := cudarts.Load(info.Library); ok {
			return r.(*cudart), g.Ordinal(), nil
		}
		r, err := bindCudart(info.Library)
		if err != nil {
			return nil, 0, err
		}
		actual, _ := cudarts.LoadOrStore(info.Library, r)
		return actual.(*cudart), g.Ordinal(), nil
	}
	return nil, 0, unsupportedf("%v cannot wait for a CUDA stream: no probed CUDA backend owns it", dev)
}

func bindCudart(path string) (*cudart, error) {
	lib, err := ffi.Open(path) // loaded already: the same copy, never closed
	if err != nil {
		return nil, fmt.Errorf("cai: %w: %v", device.ErrNotFound, err)
	}
	r := &cudart{path: path}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{{"cudaSetDevice", &r.setDevice}, {"cudaStreamSynchronize", &r.streamSync},
		{"cudaEventRecord", &r.eventRecord}, {"cudaGetErrorString", &r.errStr}} {
		if *s.p, err = lib.Symbol(s.name); err != nil {
			return nil, fmt.Errorf("cai: %w: %v", device.ErrMissingSymbol, err)
		}
	}
	return r, nil
}

// handle is the cudaStream_t of a CAI stream value: the NULL stream for
// the legacy default stream (which is what NULL means to the runtime's
// entry points without the _ptsz suffix, the ones bound), the value itself
// otherwise (2 is cudaStreamPerThread).
func handle(v uintptr) uintptr {
	if v == uintptr(StreamLegacy) {
		return 0
	}
	return v
}

func (r *cudart) call(name string, fn uintptr, args ...uintptr) error {
	if code := int32(ffi.Call(fn, args...)); code != 0 {
		return &device.RuntimeError{Runtime: "cuda", Call: name, Code: int(code),
			Message: ffi.GoString(ffi.Call(r.errStr, uintptr(uint32(code))))}
	}
	return nil
}

// on runs f on a locked OS thread whose current device is ordinal.
func (r *cudart) on(ordinal int, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.call("cudaSetDevice", r.setDevice, uintptr(ordinal)); err != nil {
		return err
	}
	return f()
}

func (r *cudart) synchronize(ordinal int, v uintptr) error {
	return r.on(ordinal, func() error { return r.call("cudaStreamSynchronize", r.streamSync, handle(v)) })
}

func (r *cudart) record(ordinal int, ev, v uintptr) error {
	return r.on(ordinal, func() error { return r.call("cudaEventRecord", r.eventRecord, ev, handle(v)) })
}
