package opencl_test

import (
	"context"
	"github.com/purearrow/cdevice/internal/ffi"
	"testing"
	"time"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestErrorPaths drives the backend, a device, its streams and events into
// every failure that PoCL lets a test reach (bad arguments, use after
// Close, a producer's event that ended in error, a deadline, a probe that
// finds nothing or no OpenCL) and checks that each error wraps its path's
// documented sentinel. (No ICD at all, device.ErrNoDevice, needs a process
// of its own: TestNoDevice.)
func TestErrorPaths(t *testing.T) {
	d := probe(t).Devices[0].(*opencl.Device)
	p := loadPeer(t)
	// alloc is 16 bytes of d, freed when the test ends.
	alloc := func(t *testing.T) device.Pointer {
		ptr, err := d.Alloc(16)
		must(t, err)
		t.Cleanup(func() { d.Free(ptr) })
		return ptr
	}
	closedStream := func(t *testing.T) device.Stream {
		s, err := d.NewStream()
		must(t, err)
		must(t, s.Close())
		return s
	}
	closedEvent := func(t *testing.T) device.Event {
		ev, err := d.NewEvent()
		must(t, err)
		must(t, ev.Close())
		return ev
	}
	// failedEvent is a producer's sync event (cl_event*) that ended in
	// error.
	failedEvent := func(t *testing.T) uintptr {
		h, _, _ := p.produceOn(t, d, 16, 1)
		t.Cleanup(func() { p.release(h) })
		arr := testsupport.OffHeap[abi.DeviceArray](t)
		lib := ctest.Library(t, "opencl_peer")
		if r := int32(ctest.Func(t, lib, "peer_fail_event")(h, uintptr(unsafe.Pointer(arr)))); r != 0 {
			t.Fatalf("peer_fail_event = %d", r)
		}
		return arr.SyncEvent
	}
	cases := []testsupport.ErrorCase{
		testsupport.Case("Probe/not found", device.ErrNotFound, func(t *testing.T) error {
			_, err := opencl.NewBackendForTest([]string{"/nonexistent/libOpenCL.so.1"}, false).Probe(context.Background())
			return err
		}),
		testsupport.Case("Probe/not OpenCL", device.ErrMissingSymbol, func(t *testing.T) error {
			_, err := opencl.NewBackendForTest([]string{ffi.CLibrary}, false).Probe(context.Background())
			return err
		}),
		testsupport.Case("Probe/canceled", context.Canceled, func(t *testing.T) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := opencl.NewBackendForTest([]string{"/nonexistent"}, false).Probe(ctx)
			return err
		}),
		testsupport.Case("Alloc/size 0", device.ErrInvalid, func(t *testing.T) error {
			_, err := d.Alloc(0)
			return err
		}),
		testsupport.Case("Free/not allocated", device.ErrInvalid, func(t *testing.T) error {
			return d.Free(0xdeadbeef)
		}),
		testsupport.Case("CopyToDevice/past the end", device.ErrInvalid, func(t *testing.T) error {
			return d.CopyToDevice(alloc(t), 8, make([]byte, 9), nil)
		}),
		testsupport.Case("CopyToHost/NULL source", device.ErrInvalid, func(t *testing.T) error {
			return d.CopyToHost(make([]byte, 4), 0, 0, nil)
		}),
		testsupport.Case("CopyOnDevice/negative size", device.ErrInvalid, func(t *testing.T) error {
			ptr := alloc(t)
			return d.CopyOnDevice(ptr, 0, ptr, 8, -1, nil)
		}),
		testsupport.Case("CopyToDevice/foreign stream", device.ErrInvalid, func(t *testing.T) error {
			return d.CopyToDevice(alloc(t), 0, make([]byte, 4), fakeStream{})
		}),
		testsupport.Case("CopyToDevice/closed stream", device.ErrReleased, func(t *testing.T) error {
			return d.CopyToDevice(alloc(t), 0, make([]byte, 4), closedStream(t))
		}),
		testsupport.Case("CopyToDevice/stream of another device", device.ErrInvalid, func(t *testing.T) error {
			devs := modes(t)
			if len(devs) < 2 {
				t.Skip("one device, one buffer convention")
			}
			s, err := devs["clmem"].NewStream()
			must(t, err)
			defer s.Close()
			return devs["svm"].CopyToDevice(alloc(t), 0, make([]byte, 4), s)
		}),
		testsupport.Case("Stream.Synchronize/closed", device.ErrReleased, func(t *testing.T) error {
			return closedStream(t).Synchronize()
		}),
		testsupport.Case("Event.Record/closed", device.ErrReleased, func(t *testing.T) error {
			return closedEvent(t).Record(nil)
		}),
		testsupport.Case("Event.Synchronize/closed", device.ErrReleased, func(t *testing.T) error {
			return closedEvent(t).Synchronize()
		}),
		testsupport.Case("WaitSyncEvent/failed event", device.ErrRuntime, func(t *testing.T) error {
			return d.WaitSyncEvent(context.Background(), failedEvent(t), nil)
		}),
		testsupport.Case("WaitSyncEvent/failed event, polled", device.ErrRuntime, func(t *testing.T) error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return d.WaitSyncEvent(ctx, failedEvent(t), nil)
		}),
		testsupport.Case("WaitSyncEvent/deadline", context.DeadlineExceeded, func(t *testing.T) error {
			h, _, ev := p.produceOn(t, d, 16, 1)
			defer p.release(h)
			defer p.openGate(h)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			return d.WaitSyncEvent(ctx, ev, nil)
		}),
		testsupport.Case("WaitSyncEvent/closed stream", device.ErrReleased, func(t *testing.T) error {
			h, _, ev := p.produceOn(t, d, 16, 1)
			defer p.release(h)
			defer p.openGate(h)
			return d.WaitSyncEvent(context.Background(), ev, closedStream(t))
		}),
		testsupport.Case("MakeStreamWait/NULL queue", device.ErrInvalid, func(t *testing.T) error {
			h, _, ev := p.produceOn(t, d, 16, 1)
			defer p.release(h)
			defer p.openGate(h)
			return d.MakeStreamWait(0, ev)
		}),
		testsupport.Case("WaitForStream/NULL queue", device.ErrInvalid, func(t *testing.T) error {
			return d.WaitForStream(0, nil)
		}),
	}
	testsupport.RunErrorCases(t, cases)
}
