package cai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/tensor"
)

// checkDouble fails the test if it left allocations or queued work in the
// CUDA test double.
// (The memory cache of package cdevice keeps freed blocks: it is emptied
// first.)
func checkDouble(t *testing.T, d *double) {
	cdevice.TrimMemoryCache()
	before := d.live()
	t.Cleanup(func() {
		cdevice.TrimMemoryCache()
		if n := d.live(); n != before {
			t.Errorf("live allocations in the double: %d, were %d", n, before)
		}
		if n := d.pending(); n != 0 {
			t.Errorf("%d operations still queued in the double", n)
		}
	})
}

// Every primitive type round-trips on each kind of CUDA memory of the
// double: device (cuda:0, found by default), pinned host, managed.
func TestDoublePrimitives(t *testing.T) {
	d := cudaDouble(t)
	for _, dev := range []device.Device{d.dev, d.host, d.managed} {
		t.Run(dev.Type().String(), func(t *testing.T) {
			checkDouble(t, d)
			testPrimitives(t, dev)
		})
	}
}

// cuda:0 is the default device; the descriptor goes through JSON on the
// way, as it would to Python and back.
func TestDoubleDefaultDeviceJSON(t *testing.T) {
	d := cudaDouble(t)
	checkDouble(t, d)
	tt, _ := tensor.NewFixedShapeType(arrow.PrimitiveTypes.Int32, []int64{2, 3, 4}, []int64{1, 2, 0}, nil)
	for _, a := range []arrow.Array{
		fromJSON(t, arrow.PrimitiveTypes.Float64, `[1.5, null, 3, 4]`),
		fromJSON(t, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Uint16), `[[1, 2], null, [null, 4]]`),
		fromJSON(t, arrow.FixedWidthTypes.Boolean, `[true, false, null, true]`),
		tensorArray(t, tt, 2, 7),
	} {
		defer a.Release()
		da := toDevice(t, a, d.dev)
		defer da.Release()
		e := export(t, da)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e.Interface); err != nil {
			t.Fatal(err)
		}
		var desc cai.Interface
		if err := json.Unmarshal(b.Bytes(), &desc); err != nil {
			t.Fatal(err)
		}
		back, err := cai.Import(ctx, &desc, cai.WithOwner(e)) // cuda:0 by default
		if err != nil {
			e.Release()
			t.Fatal(err)
		}
		if back.Device != d.dev {
			t.Errorf("imported on %v", back.Device)
		}
		got := toHost(t, back)
		back.Release()
		if w, g := flatten(a), flatten(got); !slices.Equal(w, g) {
			t.Errorf("%v:\nwant %v\ngot  %v", a.DataType(), w, g)
		}
	}
}

// queued makes device memory holding b, written by a copy still queued on
// s (the double runs queued work only when something synchronizes): a
// producer with pending work on s.
func queued(t *testing.T, dev device.Device, s device.Stream, b []byte) uintptr {
	t.Helper()
	p, err := dev.Alloc(len(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Free(p) })
	var pin runtime.Pinner
	pin.Pin(&b[0])
	t.Cleanup(pin.Unpin)
	if err := dev.CopyToDevice(p, 0, b, s); err != nil {
		t.Fatal(err)
	}
	return uintptr(p)
}

// The v3 stream rules against the double's streams.
func TestDoubleStreams(t *testing.T) {
	d := cudaDouble(t)
	checkDouble(t, d)
	dev := d.dev
	vals := le64(11, 22, 33, 44)
	want := fromJSON(t, arrow.PrimitiveTypes.Int64, `[11, 22, 33, 44]`)
	defer want.Release()
	desc := func(p uintptr, stream *int64) cai.Interface {
		return cai.Interface{Shape: []int64{4}, Typestr: ne + "i8", Version: 3, Data: cai.Data{Ptr: p}, Stream: stream}
	}

	t.Run("handle: the host waits", func(t *testing.T) {
		s, _ := dev.NewStream()
		defer s.Close()
		p := queued(t, dev, s, slices.Clone(vals))
		if d.pending() == 0 {
			t.Fatal("the producer's copy is not queued")
		}
		x := desc(p, ptr(int64(s.Handle())))
		syncs := d.calls("cudaStreamSynchronize")
		da, err := cai.Import(ctx, &x)
		if err != nil {
			t.Fatal(err)
		}
		defer da.Release()
		if n := d.pending(); n != 0 || d.calls("cudaStreamSynchronize") != syncs+1 {
			t.Errorf("%d operations queued after Import, %d host synchronizations", n, d.calls("cudaStreamSynchronize")-syncs)
		}
		if got := toHost(t, da); !array.Equal(got, want) {
			t.Errorf("got %v", got)
		}
	})

	t.Run("handle ignored: stale data", func(t *testing.T) {
		s, _ := dev.NewStream()
		defer s.Close()
		p := queued(t, dev, s, slices.Clone(vals))
		x := desc(p, ptr(int64(s.Handle())))
		da, err := cai.Import(ctx, &x, cai.WithIgnoreStream())
		if err != nil {
			t.Fatal(err)
		}
		defer da.Release()
		got := toHost(t, da).(*array.Int64)
		if got.Value(0) == 11 {
			t.Error("the producer's copy ran without a synchronization: the double does not show what the stream rule is for")
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("consumer stream waits, not the host", func(t *testing.T) {
		s, _ := dev.NewStream()
		defer s.Close()
		c, _ := dev.NewStream()
		defer c.Close()
		p := queued(t, dev, s, slices.Clone(vals))
		x := desc(p, ptr(int64(s.Handle())))
		syncs, waits := d.calls("cudaStreamSynchronize"), d.calls("cudaStreamWaitEvent")
		da, err := cai.Import(ctx, &x, cai.WithConsumerStream(c))
		if err != nil {
			t.Fatal(err)
		}
		defer da.Release()
		if n := d.pending(); n != 2 {
			t.Errorf("%d operations queued, want the producer's copy and the consumer's wait", n)
		}
		if ds, dw := d.calls("cudaStreamSynchronize")-syncs, d.calls("cudaStreamWaitEvent")-waits; ds != 0 || dw != 1 {
			t.Errorf("%d host synchronizations, %d device waits; want 0, 1", ds, dw)
		}
		out := make([]byte, 32)
		if err := dev.CopyToHost(out, device.Pointer(p), 0, c); err != nil {
			t.Fatal(err)
		}
		if err := c.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, vals) {
			t.Errorf("the consumer stream read %v", out)
		}
	})

	// The producer queues on a default stream, as C code does (the legacy
	// one: NULL; the per-thread one, built with --default-stream
	// per-thread: cudaStreamPerThread, 2), and the descriptor names it.
	// Import runs on the producer's OS thread (the package doc's rule for
	// per-thread streams).
	for _, tc := range []struct {
		name   string
		handle uintptr
		stream int64
	}{{"legacy default stream", 0, cai.StreamLegacy}, {"per-thread default stream", 2, cai.StreamPerThread}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := dev.Alloc(32)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Free(p)
			src := slices.Clone(vals)
			var pin runtime.Pinner
			pin.Pin(&src[0])
			defer pin.Unpin()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			rc := d.call("cudaSetDevice", 0)
			if rc == 0 { // cudaMemcpyHostToDevice = 1
				rc = d.call("cudaMemcpyAsync", uintptr(p), uintptr(unsafe.Pointer(&src[0])), 32, 1, tc.handle)
			}
			if rc != 0 || d.pending() != 1 {
				t.Fatalf("queueing on stream %d: %d, %d queued", tc.handle, rc, d.pending())
			}
			x := desc(uintptr(p), ptr(tc.stream))
			da, err := cai.Import(ctx, &x)
			if err != nil {
				t.Fatal(err)
			}
			defer da.Release()
			if got := toHost(t, da); !array.Equal(got, want) || d.pending() != 0 {
				t.Errorf("got %v, %d queued", got, d.pending())
			}
		})
	}

	t.Run("bad handle", func(t *testing.T) {
		p := devBytes(t, dev, vals)
		x := desc(p, ptr(0xdead0))
		_, err := cai.Import(ctx, &x)
		if !errors.Is(err, device.ErrRuntime) {
			t.Errorf("bad handle: %v", err)
		}
		c, _ := dev.NewStream()
		defer c.Close()
		if _, err := cai.Import(ctx, &x, cai.WithConsumerStream(c)); !errors.Is(err, device.ErrRuntime) {
			t.Errorf("bad handle, consumer stream: %v", err)
		}
	})

	t.Run("exporter names its stream", func(t *testing.T) {
		s, _ := dev.NewStream()
		defer s.Close()
		a := fromJSON(t, arrow.PrimitiveTypes.Int64, `[1, null, 3]`)
		defer a.Release()
		da := toDevice(t, a, dev)
		defer da.Release()
		e := export(t, da, cai.WithStream(s))
		x := e.Interface
		if x.Stream == nil || *x.Stream != int64(s.Handle()) {
			t.Fatalf("stream %v", x.Stream)
		}
		back, err := cai.Import(ctx, &x, cai.WithOwner(e))
		if err != nil {
			e.Release()
			t.Fatal(err)
		}
		defer back.Release()
		if got := toHost(t, back); !array.Equal(got, a) {
			t.Errorf("got %v", got)
		}
		// A stream of another device is the device's error, not a crash.
		other, _ := fake.NewStream()
		if _, err := cai.Export(ctx, da, cai.WithStream(other)); err == nil {
			t.Error("a stream of another device was accepted")
		}
	})
}
