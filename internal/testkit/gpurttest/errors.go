package gpurttest

import (
	"context"
	"github.com/purearrow/cdevice/internal/ffi"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// An ErrorPath is one error path of a runtime's backend, Device, Stream or
// Event: a call driven into failure (on the test double, with bad
// arguments or an injected fault) and the sentinel its error must wrap.
// The runtime packages check them against the documented sentinels
// (testsupport, which this package cannot import).
type ErrorPath struct {
	Name string
	Want error
	Call func(t *testing.T) error
}

// ErrorPaths returns every error path of rt's exported API; each call sets
// up the double afresh and leaves nothing held.
func ErrorPaths(rt Runtime) []ErrorPath {
	// dev is device memory of GPU 0 of a fresh double with two GPUs.
	dev := func(t *testing.T) (*Fake, Device) {
		f := NewFake(t, rt, 2)
		return f, f.Probe()[0]
	}
	// closedStream is a stream of d, closed.
	closedStream := func(t *testing.T, d Device) device.Stream {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	closedEvent := func(t *testing.T, d Device) device.Event {
		ev, err := d.NewEvent()
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Close(); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	// alloc is 16 bytes of d, freed when the test ends.
	alloc := func(t *testing.T, d Device) device.Pointer {
		p, err := d.Alloc(16)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Free(p) })
		return p
	}
	sym := rt.sym
	return []ErrorPath{
		// Probe.
		{"Probe/not found", device.ErrNotFound, func(t *testing.T) error {
			_, err := rt.backend(filepath.Join(t.TempDir(), "lib"+rt.Table.Name+".so.404")).Probe(context.Background())
			return err
		}},
		{"Probe/no device", device.ErrNoDevice, func(t *testing.T) error {
			f := NewFake(t, rt, 0)
			_, err := rt.backend(f.path).Probe(context.Background())
			return err
		}},
		{"Probe/not the runtime", device.ErrMissingSymbol, func(t *testing.T) error {
			_, err := rt.backend(ffi.CLibrary).Probe(context.Background())
			return err
		}},
		{"Probe/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f := NewFake(t, rt, 1)
			f.fail(sym(gpurt.DriverGetVersion), 3, 0)
			_, err := rt.backend(f.path).Probe(context.Background())
			return err
		}},
		{"Probe/canceled", context.Canceled, func(t *testing.T) error {
			f := NewFake(t, rt, 1)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := rt.backend(f.path).Probe(ctx)
			return err
		}},
		// Memory.
		{"Alloc/size 0", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			_, err := d.Alloc(0)
			return err
		}},
		{"Alloc/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			f.fail(rt.Table.Kinds[0].Alloc, 2, 0)
			_, err := d.Alloc(16)
			return err
		}},
		{"Free/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			p, err := d.Alloc(16)
			if err != nil {
				t.Fatal(err)
			}
			f.fail(rt.Table.Kinds[0].Free, 1, 0)
			err = d.Free(p)
			if ferr := d.Free(p); ferr != nil {
				t.Fatal(ferr)
			}
			return err
		}},
		{"MemoryInfo/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			f.fail(sym(gpurt.MemGetInfo), 1, 0)
			_, _, err := d.MemoryInfo()
			return err
		}},
		// Copies.
		{"CopyToDevice/NULL destination", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			return d.CopyToDevice(0, 0, []byte{1}, nil)
		}},
		{"CopyToHost/negative offset", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			return d.CopyToHost(make([]byte, 1), alloc(t, d), -1, nil)
		}},
		{"CopyOnDevice/negative size", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			p := alloc(t, d)
			return d.CopyOnDevice(p, 0, p, 8, -1, nil)
		}},
		{"CopyToDevice/CPU stream", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			s, _ := device.CPU.NewStream()
			return d.CopyToDevice(alloc(t, d), 0, []byte{1}, s)
		}},
		{"CopyToDevice/stream of another GPU", device.ErrInvalid, func(t *testing.T) error {
			f := NewFake(t, rt, 2)
			ds := f.Probe()
			other, err := ds[len(rt.Table.Kinds)].NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			return ds[0].CopyToDevice(alloc(t, ds[0]), 0, []byte{1}, other)
		}},
		{"CopyToDevice/closed stream", device.ErrReleased, func(t *testing.T) error {
			_, d := dev(t)
			return d.CopyToDevice(alloc(t, d), 0, []byte{1}, closedStream(t, d))
		}},
		{"CopyToHost/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			p := alloc(t, d)
			f.fail(rt.copySym(gpurt.DeviceMemory, rt.Table.Memcpy.DeviceToHost), 1, 0)
			return d.CopyToHost(make([]byte, 4), p, 0, nil)
		}},
		// Streams.
		{"NewStream/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			f.fail(sym(gpurt.StreamCreateWithFlags), 2, 0)
			_, err := d.NewStream()
			return err
		}},
		{"Stream.Synchronize/closed", device.ErrReleased, func(t *testing.T) error {
			_, d := dev(t)
			return closedStream(t, d).Synchronize()
		}},
		{"Stream.Synchronize/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f.fail(sym(gpurt.StreamSynchronize), 400, 0)
			return s.Synchronize()
		}},
		{"Stream.Close/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			f.fail(sym(gpurt.StreamDestroy), 400, 0)
			err = s.Close()
			if cerr := s.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			return err
		}},
		{"WaitForStream/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			f.fail(sym(gpurt.StreamSynchronize), 400, 0)
			return d.(device.ForeignStreams).WaitForStream(d.DefaultStream(), nil)
		}},
		// Events.
		{"NewEvent/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			f.fail(sym(gpurt.EventCreateWithFlags), 2, 0)
			_, err := d.NewEvent()
			return err
		}},
		{"Event.Record/closed", device.ErrReleased, func(t *testing.T) error {
			_, d := dev(t)
			return closedEvent(t, d).Record(nil)
		}},
		{"Event.Synchronize/closed", device.ErrReleased, func(t *testing.T) error {
			_, d := dev(t)
			return closedEvent(t, d).Synchronize()
		}},
		{"Event.Record/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			ev, err := d.NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			f.fail(sym(gpurt.EventRecord), 400, 0)
			return ev.Record(nil)
		}},
		{"Event.Close/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			ev, err := d.NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			f.fail(sym(gpurt.EventDestroy), 400, 0)
			err = ev.Close()
			if cerr := ev.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			return err
		}},
		{"WaitSyncEvent/NULL event", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			null := cmem(t, unsafe.Sizeof(uintptr(0))) // a cudaEvent_t* to a NULL event
			return d.WaitSyncEvent(context.Background(), uintptr(null), nil)
		}},
		{"WaitSyncEvent/stream of another GPU", device.ErrInvalid, func(t *testing.T) error {
			f := NewFake(t, rt, 2)
			ds := f.Probe()
			ev, err := ds[0].NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			other, err := ds[len(rt.Table.Kinds)].NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			return ds[0].WaitSyncEvent(context.Background(), ev.SyncEvent(), other)
		}},
		{"WaitSyncEvent/deadline", context.DeadlineExceeded, func(t *testing.T) error {
			f := NewFake(t, rt, 1)
			host := f.Probe()[rt.kind(gpurt.HostMemory)]
			ev, err := host.NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			p := alloc(t, host)
			if err := host.CopyToDevice(p, 0, Pattern(16, 1), nil); err != nil {
				t.Fatal(err)
			}
			if err := ev.Record(nil); err != nil {
				t.Fatal(err)
			}
			f.Call("fake_cuda_hold", 1)
			defer f.Call("fake_cuda_hold", 0)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			err = host.WaitSyncEvent(ctx, ev.SyncEvent(), nil)
			f.Call("fake_cuda_hold", 0)
			if serr := ev.Synchronize(); serr != nil {
				t.Fatal(serr)
			}
			return err
		}},
		{"WaitSyncEvent/runtime fault", device.ErrRuntime, func(t *testing.T) error {
			f, d := dev(t)
			ev, err := d.NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			if err := ev.Record(nil); err != nil {
				t.Fatal(err)
			}
			f.fail(sym(gpurt.EventSynchronize), 400, 0)
			return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), nil)
		}},
		{"MakeStreamWait/NULL event", device.ErrInvalid, func(t *testing.T) error {
			_, d := dev(t)
			null := cmem(t, unsafe.Sizeof(uintptr(0)))
			return d.(device.ForeignStreams).MakeStreamWait(d.DefaultStream(), uintptr(null))
		}},
	}
}
