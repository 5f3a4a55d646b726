package cdevice_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// faultyDevice wraps a real device (PoCL's OpenCL device when present) and
// fails the k-th call of one method with a runtime error, so every call site
// of the library meets a failure: the caller must get that error and every
// allocation, stream and event taken before it must be given back.
type faultyDevice struct {
	device.Device
	mu                    sync.Mutex
	call                  string // method to fail
	after                 int    // calls of it that succeed first
	allocs, frees         int
	streams, closedStream int
	events, closedEvents  int
}

func (d *faultyDevice) Type() abi.DeviceType { return abi.DeviceExtDev }
func (d *faultyDevice) ID() int64            { return 1 }
func (d *faultyDevice) HostAccessible() bool { return false }

// fail reports whether this call of name is the one to fail.
func (d *faultyDevice) fail(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.call != name {
		return nil
	}
	if d.after > 0 {
		d.after--
		return nil
	}
	d.call = "" // fail once
	return &device.RuntimeError{Runtime: "fault", Call: name, Code: 99, Message: "injected"}
}

func (d *faultyDevice) Alloc(n int) (device.Pointer, error) {
	if err := d.fail("Alloc"); err != nil {
		return 0, err
	}
	p, err := d.Device.Alloc(n)
	if err == nil {
		d.mu.Lock()
		d.allocs++
		d.mu.Unlock()
	}
	return p, err
}

func (d *faultyDevice) Free(p device.Pointer) error {
	d.mu.Lock()
	d.frees++
	d.mu.Unlock()
	return d.Device.Free(p)
}

func (d *faultyDevice) CopyToDevice(dst device.Pointer, off int, src []byte, s device.Stream) error {
	if err := d.fail("CopyToDevice"); err != nil {
		return err
	}
	return d.Device.CopyToDevice(dst, off, src, s.(*faultyStream).Stream)
}

func (d *faultyDevice) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	if err := d.fail("CopyToHost"); err != nil {
		return err
	}
	return d.Device.CopyToHost(dst, src, off, s.(*faultyStream).Stream)
}

func (d *faultyDevice) NewStream() (device.Stream, error) {
	if err := d.fail("NewStream"); err != nil {
		return nil, err
	}
	s, err := d.Device.NewStream()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.streams++
	d.mu.Unlock()
	return &faultyStream{Stream: s, d: d}, nil
}

func (d *faultyDevice) NewEvent() (device.Event, error) {
	if err := d.fail("NewEvent"); err != nil {
		return nil, err
	}
	e, err := d.Device.NewEvent()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.events++
	d.mu.Unlock()
	return &faultyEvent{Event: e, d: d}, nil
}

func (d *faultyDevice) WaitSyncEvent(ctx context.Context, ev uintptr, s device.Stream) error {
	if err := d.fail("WaitSyncEvent"); err != nil {
		return err
	}
	if fs, ok := s.(*faultyStream); ok {
		s = fs.Stream
	}
	return d.Device.WaitSyncEvent(ctx, ev, s)
}

type faultyStream struct {
	device.Stream
	d *faultyDevice
}

func (s *faultyStream) Synchronize() error {
	if err := s.d.fail("Stream.Synchronize"); err != nil {
		s.Stream.Synchronize() // the real work still completes
		return err
	}
	return s.Stream.Synchronize()
}

func (s *faultyStream) Close() error {
	s.d.mu.Lock()
	s.d.closedStream++
	s.d.mu.Unlock()
	return s.Stream.Close()
}

type faultyEvent struct {
	device.Event
	d *faultyDevice
}

func (e *faultyEvent) Record(s device.Stream) error {
	if err := e.d.fail("Event.Record"); err != nil {
		return err
	}
	return e.Event.Record(s.(*faultyStream).Stream)
}

func (e *faultyEvent) Synchronize() error {
	if err := e.d.fail("Event.Synchronize"); err != nil {
		return err
	}
	return e.Event.Synchronize()
}

func (e *faultyEvent) Close() error {
	e.d.mu.Lock()
	e.d.closedEvents++
	e.d.mu.Unlock()
	return e.Event.Close()
}

var faulty = func() *faultyDevice {
	d := &faultyDevice{Device: device.CPU}
	device.Register(d)
	return d
}()

// TestFaultInjection fails every runtime call the library makes, one at a
// time and at several depths, in every operation that makes it.
func TestFaultInjection(t *testing.T) {
	if dev := firstDeviceOrNil("opencl"); dev != nil {
		faulty.Device = dev // a real runtime underneath
	}
	ctx := context.Background()
	rec := wideBatch(t)
	old := cdevice.SetMemoryCacheLimit(0) // every free reaches the device
	defer cdevice.SetMemoryCacheLimit(old)
	ops := map[string]func() error{
		"CopyRecordBatchToDevice": func() error {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, faulty)
			if err == nil {
				db.Release()
			}
			return err
		},
		"ToHost": func() error {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, faulty)
			if err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			defer db.Release()
			h, err := db.ToHost(ctx)
			if err == nil {
				if !array.RecordEqual(rec, h) {
					err = errors.New("values differ")
				}
				h.Release()
			}
			return err
		},
		"ImportDeviceRecordBatchOnDevice": func() error {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, faulty)
			if err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			arr, sch := cdevice.New[abi.DeviceArray](), cdevice.New[abi.Schema]()
			defer cdevice.Free(arr)
			defer cdevice.Free(sch)
			err = db.Export(arr, sch)
			db.Release()
			if err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			got, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
			if err == nil {
				got.Release()
			} else if !arr.Array.Released() {
				t.Error("a failed import left its input unreleased")
			}
			return err
		},
	}
	calls := []string{"Alloc", "CopyToDevice", "CopyToHost", "NewStream", "NewEvent",
		"Event.Record", "Event.Synchronize", "Stream.Synchronize", "WaitSyncEvent"}
	points := 0
	for name, op := range ops {
		for _, call := range calls {
			for _, after := range []int{0, 3} {
				faulty.mu.Lock()
				faulty.call, faulty.after = call, after
				faulty.allocs, faulty.frees, faulty.streams, faulty.closedStream, faulty.events, faulty.closedEvents = 0, 0, 0, 0, 0, 0
				faulty.mu.Unlock()
				err := op()
				faulty.mu.Lock()
				fired := faulty.call == ""
				leaks := [3]int{faulty.allocs - faulty.frees, faulty.streams - faulty.closedStream, faulty.events - faulty.closedEvents}
				faulty.call = ""
				faulty.mu.Unlock()
				switch {
				case !fired && err != nil:
					t.Errorf("%s, %s never failed, yet: %v", name, call, err)
				case fired:
					points++
					var re *device.RuntimeError
					if !errors.As(err, &re) || re.Call != call || re.Code != 99 || re.Message != "injected" {
						t.Errorf("%s with %s failing (after %d): got %v, want the runtime error naming %s", name, call, after, err, call)
					}
				}
				if leaks != [3]int{} {
					t.Errorf("%s with %s failing (after %d): %d allocations, %d streams, %d events not given back", name, call, after, leaks[0], leaks[1], leaks[2])
				}
			}
		}
	}
	if points < 15 {
		t.Errorf("only %d fault points fired", points)
	}
	t.Logf("%d fault points fired across %d operations", points, len(ops))
	if l := cdevice.LiveLeaks(); l.Exports() != 0 || l.Imports() != 0 || l.DeviceArrays != 0 {
		t.Errorf("leaks after the faults: %s", l)
	}
}

// firstDeviceOrNil is firstDevice without skipping.
func firstDeviceOrNil(backend string) device.Device {
	for _, b := range device.Backends() {
		if b.Name() == backend {
			if info, err := b.Probe(context.Background()); err == nil && len(info.Devices) > 0 {
				return info.Devices[0]
			}
		}
	}
	return nil
}
