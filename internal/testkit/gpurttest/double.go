package gpurttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// Tests on the C test double of the runtime.

func testProbe(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 2)
	b := rt.backend(f.path)
	info, err := b.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if info.Library != f.path || info.Version != rt.Version {
		t.Errorf("Library %q, Version %q", info.Library, info.Version)
	}
	kinds := rt.Table.Kinds
	nk := len(kinds)
	if len(info.Devices) != 2*nk {
		t.Fatalf("%d devices, want %d for each of 2", len(info.Devices), nk)
	}
	for i, dd := range info.Devices {
		d := dd.(Device)
		n, k := i/nk, kinds[i%nk]
		// Device memory of a GPU that is the host's CPU is the host's.
		onHost := k.Memory != gpurt.DeviceMemory || dd.(interface{ IsCPU() bool }).IsCPU()
		if d.Type() != k.Type || d.Ordinal() != n || d.ID() != int64(n) || d.HostAccessible() != onHost {
			t.Errorf("device %d: %v type %v ordinal %d host %v", i, d, d.Type(), d.Ordinal(), d.HostAccessible())
		}
		if _, bare := dd.(*gpurt.Device); bare {
			t.Errorf("device %d: %v is a *gpurt.Device, not the runtime package's Device", i, d)
		}
		if !strings.HasPrefix(d.Name(), fmt.Sprintf("Fake CUDA Device %d", n)) {
			t.Errorf("device %d: name %q", i, d.Name())
		}
		// The default stream is non-blocking and on its own device.
		s := d.DefaultStream()
		if fl, dev := int32(f.Call("fake_cuda_stream_flags", s)), int32(f.Call("fake_cuda_stream_device", s)); fl != 1 || dev != int32(n) {
			t.Errorf("default stream of %v: flags %d, device %d", d, fl, dev)
		}
	}
	if got := info.Devices[nk].Name(); got != "Fake CUDA Device 1" {
		t.Errorf("name %q", got)
	}
	if got := info.Devices[nk+rt.kind(gpurt.HostMemory)].Name(); got != "Fake CUDA Device 1 (pinned host memory)" {
		t.Errorf("name %q", got)
	}
	if props := rt.nameSym(); f.calls(props) != 2 {
		t.Errorf("%s called %d times, want it preferred, once a device", props, f.calls(props))
	}
	f.wantLive(0, 0, 2)
	if rt.driver() && f.contexts() != 2 {
		t.Errorf("%d primary contexts retained, want one a GPU", f.contexts())
	}

	// Cached: a second probe asks the runtime nothing.
	again, err := b.Probe(context.Background())
	if err != nil || !slices.Equal(again.Devices, info.Devices) || again.Version != info.Version {
		t.Errorf("second probe: %v %v", again, err)
	}
	if n := f.calls(rt.sym(gpurt.GetDeviceCount)); n != 1 {
		t.Errorf("%s called %d times", rt.sym(gpurt.GetDeviceCount), n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	f.wantLive(0, 0, 0)
	if n := f.contexts(); n != 0 {
		t.Errorf("%d primary contexts retained after Close", n)
	}
	// A closed backend's devices are used up: no call reaches the runtime
	// (its default stream and context are gone).
	calls := f.calls(rt.sym(gpurt.SetDevice))
	for _, dd := range info.Devices {
		if _, err := dd.Alloc(64); !errors.Is(err, device.ErrReleased) {
			t.Errorf("%v: Alloc after Close: %v; want ErrReleased", dd, err)
		}
		if err := dd.CopyToDevice(1, 0, []byte{1}, nil); !errors.Is(err, device.ErrReleased) {
			t.Errorf("%v: CopyToDevice after Close: %v; want ErrReleased", dd, err)
		}
	}
	if n := f.calls(rt.sym(gpurt.SetDevice)) - calls; n != 0 {
		t.Errorf("%d calls of %s after Close", n, rt.sym(gpurt.SetDevice))
	}
}

// A caller that gave up before the probe started does not use it up.
func testProbeCanceled(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	b := rt.backend(f.path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Probe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled probe: %v", err)
	}
	if f.calls(rt.sym(gpurt.GetDeviceCount)) != 0 {
		t.Fatal("a canceled probe called the runtime")
	}
	if _, err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Close()
}

func testRegistered(t *testing.T, rt Runtime) {
	if !slices.Contains(device.Backends(), rt.Backend) || rt.Backend.Name() != rt.Table.Name {
		t.Fatalf("the %s Backend is not registered", rt.Table.Name)
	}
	f := NewFake(t, rt, 1)
	b := gpurt.NewBackend(true, gpurt.Source{Table: rt.Table, Candidates: gpurt.Paths(f.path)})
	info, err := b.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, d := range info.Devices {
		got, err := device.Lookup(d.Type(), d.ID())
		if err != nil || got != d {
			t.Errorf("Lookup(%v, %d) = %v, %v", d.Type(), d.ID(), got, err)
		}
	}
}

func testAllocFree(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	ds := f.Probe()
	for i, k := range rt.Table.Kinds {
		d := ds[i]
		free0, total, err := d.MemoryInfo()
		if err != nil {
			t.Fatal(err)
		}
		p, err := d.Alloc(1000)
		if err != nil {
			t.Fatal(err)
		}
		f.wantLive(1, 0, 1)
		free1, _, _ := d.MemoryInfo()
		switch k.Memory {
		case gpurt.HostMemory:
			if free0 != 0 || total != 0 || free1 != 0 {
				t.Errorf("%v: MemoryInfo %d %d, want zeros for host memory", d, free0, total)
			}
		default:
			if total <= 0 || free0 != total || free0-free1 != 1000 {
				t.Errorf("%v: MemoryInfo before %d/%d, after %d", d, free0, total, free1)
			}
		}
		if k.Memory != gpurt.DeviceMemory {
			m := HostBytes(p, 1000)
			copy(m, Pattern(1000, 3))
			if !bytes.Equal(m, Pattern(1000, 3)) {
				t.Errorf("%v: host access", d)
			}
		}
		if err := d.Free(p); err != nil {
			t.Fatal(err)
		}
		f.wantLive(0, 0, 1)
		// A second free is the runtime's error, not a crash.
		rt.wantRuntimeError(t, d.Free(p), k.Free, 1, "invalid argument")
	}

	// Each kind frees with its own call: the device free refuses pinned host memory.
	dev, host := ds[rt.kind(gpurt.DeviceMemory)], ds[rt.kind(gpurt.HostMemory)]
	p, err := host.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	rt.wantRuntimeError(t, dev.Free(p), rt.Table.Kinds[0].Free, 1, "invalid argument")
	if err := host.Free(p); err != nil {
		t.Fatal(err)
	}
	if err := dev.Free(0); err != nil {
		t.Errorf("Free(0): %v", err)
	}

	if _, err := dev.Alloc(0); err == nil || errors.Is(err, device.ErrRuntime) {
		t.Errorf("Alloc(0): %v", err)
	}
	// More than the double's device memory: the runtime's own refusal.
	_, err = dev.Alloc(int(min(uint64(1)<<40, uint64(math.MaxInt))))
	rt.wantRuntimeError(t, err, rt.Table.Kinds[0].Alloc, 2, "out of memory")
}

func testCopies(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	ds := f.Probe()
	src := Pattern(64, 1)
	mk := rt.Table.Memcpy
	for i, d := range ds {
		want := func(kind uintptr) {
			t.Helper()
			// Host and managed memory are addressed by unified addresses:
			// the runtime infers the direction.
			if rt.Table.Kinds[i%len(rt.Table.Kinds)].Memory != gpurt.DeviceMemory {
				kind = mk.Default
			}
			if got := f.lastKind(); got != kind {
				t.Errorf("%v: memcpy kind %d, want %d", d, got, kind)
			}
		}
		a, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		// Two halves at offsets, a device-to-device copy between offsets,
		// and back at an offset.
		if err := d.CopyToDevice(a, 0, src[:32], s); err != nil {
			t.Fatal(err)
		}
		want(mk.HostToDevice)
		if err := d.CopyToDevice(a, 32, src[32:], s); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyOnDevice(b, 8, a, 16, 40, s); err != nil {
			t.Fatal(err)
		}
		want(mk.DeviceToDevice)
		dst := make([]byte, 40)
		if err := d.CopyToHost(dst, b, 8, s); err != nil {
			t.Fatal(err)
		}
		want(mk.DeviceToHost)
		whole := make([]byte, 64)
		if err := d.CopyToHost(whole, a, 0, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src[16:56]) || !bytes.Equal(whole, src) {
			t.Errorf("%v: copies gave %v / %v", d, dst, whole)
		}

		// The default stream (nil), waited on through an event.
		back := make([]byte, 10)
		if err := d.CopyToDevice(a, 5, src[50:60], nil); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyToHost(back, a, 5, nil); err != nil {
			t.Fatal(err)
		}
		ev, err := d.NewEvent()
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(nil); err != nil {
			t.Fatal(err)
		}
		if err := ev.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, src[50:60]) {
			t.Errorf("%v: default stream copies gave %v", d, back)
		}

		// A range past the allocation is the runtime's error.
		rt.wantRuntimeError(t, d.CopyToDevice(a, 60, src[:8], s), rt.copySym(rt.Table.Kinds[i].Memory, mk.HostToDevice), 1, "invalid argument")
		// Empty copies do nothing; bad arguments are refused before the runtime.
		if err := d.CopyToDevice(a, 0, nil, s); err != nil {
			t.Error(err)
		}
		if err := d.CopyOnDevice(b, -1, a, 0, 4, s); err == nil || errors.Is(err, device.ErrRuntime) {
			t.Errorf("negative offset: %v", err)
		}
		for _, c := range []interface{ Close() error }{ev, s} {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []device.Pointer{a, b} {
			if err := d.Free(p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Copies are queued: nothing is visible before a sync, and one stream does
// not see another's queued work; but a copy to pageable host memory (Go's)
// completes before it returns, with the work queued before it on its
// stream, as CUDA documents.
func testStreamOrdering(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	ds := f.Probe()
	d, host := ds[rt.kind(gpurt.DeviceMemory)], ds[rt.kind(gpurt.HostMemory)]
	buf, err := d.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	pinned, err := host.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Free(pinned)
	s1, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if uintptr(f.Call("fake_cuda_stream_flags", s1.Handle())) != rt.Table.StreamNonBlocking {
		t.Error("NewStream did not make a non-blocking stream")
	}

	src, fresh := Pattern(256, 9), bytes.Clone(HostBytes(pinned, 256))
	if err := d.CopyToDevice(buf, 0, src, s1); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(HostBytes(pinned, 256), buf, 0, s1); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 2 || !bytes.Equal(HostBytes(pinned, 256), fresh) {
		t.Fatalf("before sync: %d queued, pinned memory changed", f.pending())
	}
	// s2 reads buf while s1's write is still queued: stale device memory.
	other := make([]byte, 256)
	if err := d.CopyToHost(other, buf, 0, s2); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 2 || !bytes.Equal(other, bytes.Repeat([]byte{0xA5}, 256)) {
		t.Errorf("s2 saw s1's queued write (%d queued): %v", f.pending(), other[:8])
	}
	// A copy to Go memory on s1 runs s1's queue first.
	dst := make([]byte, 256)
	if err := d.CopyToHost(dst, buf, 0, s1); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 0 || !bytes.Equal(dst, src) || !bytes.Equal(HostBytes(pinned, 256), src) {
		t.Fatalf("after a copy to pageable memory: %d queued, dst %v", f.pending(), dst[:8])
	}
}

func testEvents(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	ds := f.Probe()
	d, host := ds[rt.kind(gpurt.DeviceMemory)], ds[rt.kind(gpurt.HostMemory)]
	heap := ffi.LiveAllocations()
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	defer s1.Close()
	defer s2.Close()
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	p := ev.SyncEvent()
	if p == 0 || ffi.LiveAllocations() != heap+1 {
		t.Fatal("SyncEvent is not an off-heap event handle*")
	}
	if fl := uintptr(f.Call("fake_cuda_event_flags", *(*uintptr)(abi.Pointer(p)))); fl != rt.Table.EventDisableTiming {
		t.Errorf("event flags %d, want the disable-timing flag", fl)
	}
	f.wantLive(0, 1, 3)

	// s2 waits for s1's write through the sync event, without the host
	// waiting (pinned memory: a copy to Go's would complete at once).
	buf, _ := d.Alloc(128)
	defer d.Free(buf)
	pinned, _ := host.Alloc(128)
	src, dst := Pattern(128, 5), HostBytes(pinned, 128)
	if err := d.CopyToDevice(buf, 0, src, s1); err != nil {
		t.Fatal(err)
	}
	if err := ev.Record(s1); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitSyncEvent(context.Background(), p, s2); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(dst, buf, 0, s2); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 3 {
		t.Errorf("%d queued, want copy, wait, copy", f.pending())
	}
	if err := s2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, src) || f.pending() != 0 {
		t.Errorf("after waiting on the event: %v, %d queued", dst[:8], f.pending())
	}
	if err := host.Free(pinned); err != nil {
		t.Fatal(err)
	}

	// The host waits: Synchronize and WaitSyncEvent with a nil stream.
	hbuf, _ := host.Alloc(64)
	defer host.Free(hbuf)
	for i, wait := range []func() error{ev.Synchronize, func() error { return host.WaitSyncEvent(context.Background(), p, nil) }} {
		src := Pattern(64, byte(40+i))
		if err := host.CopyToDevice(hbuf, 0, src, s1); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(s1); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(HostBytes(hbuf, 64), src) {
			t.Fatal("copy visible before the event was waited on")
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(HostBytes(hbuf, 64), src) {
			t.Errorf("wait %d: copy not visible after the event", i)
		}
	}

	if err := d.WaitSyncEvent(context.Background(), 0, s1); err != nil {
		t.Errorf("WaitSyncEvent(NULL): %v", err)
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	if ev.SyncEvent() != 0 || ev.Record(s1) == nil || ev.Synchronize() == nil {
		t.Error("event usable after Close")
	}
	if err := ev.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if ffi.LiveAllocations() != heap {
		t.Error("event slot not freed")
	}
	f.wantLive(2, 0, 3)
}

// A producer that is not Go (the double's functions called directly, as a
// C library would) hands over an event handle*; the consumer waits on it.
func testForeignSyncEvent(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	d := f.Probe()[0]
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f.setDevice(0)
	fstream, evSlot := cmem(t, 8), cmem(t, 8)
	if rc := f.code(gpurt.StreamCreateWithFlags, uintptr(fstream), 0); rc != 0 {
		t.Fatal(rc)
	}
	if rc := f.code(gpurt.EventCreateWithFlags, uintptr(evSlot), 0); rc != 0 {
		t.Fatal(rc)
	}
	fs, fev := *(*uintptr)(fstream), *(*uintptr)(evSlot)
	defer f.code(gpurt.StreamDestroy, fs)
	defer f.code(gpurt.EventDestroy, fev)

	buf, _ := d.Alloc(32)
	defer d.Free(buf)
	s, _ := d.NewStream()
	defer s.Close()
	for i, wait := range []func() error{
		func() error { return d.WaitSyncEvent(context.Background(), uintptr(evSlot), s) },
		func() error { return d.WaitSyncEvent(context.Background(), uintptr(evSlot), nil) },
	} {
		src, dst := cmem(t, 32), make([]byte, 32)
		copy(unsafe.Slice((*byte)(src), 32), Pattern(32, byte(i)))
		if rc := f.memcpy(uintptr(buf), uintptr(src), 32, rt.Table.Memcpy.HostToDevice, fs); rc != 0 {
			t.Fatal(rc)
		}
		if rc := f.code(gpurt.EventRecord, fev, fs); rc != 0 {
			t.Fatal(rc)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyToHost(dst, buf, 0, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, Pattern(32, byte(i))) {
			t.Errorf("wait %d: consumer read %v", i, dst[:8])
		}
	}

	// A sync_event that points at a NULL event handle is refused.
	null := cmem(t, 8)
	if err := d.WaitSyncEvent(context.Background(), uintptr(null), s); err == nil {
		t.Error("NULL event handle accepted")
	}
}

// testForeignStreams: device.ForeignStreams with a stream that C made on
// the second GPU. The test's thread is left on the first GPU before each
// call, so a call that does not make its GPU current fails in the double.
func testForeignStreams(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 2)
	ds := f.Probe()
	d := ds[len(rt.Table.Kinds)] // device memory of GPU 1
	fsd, ok := d.(device.ForeignStreams)
	if !ok {
		t.Fatalf("%T is not a device.ForeignStreams", d)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	onGPU := f.setDevice
	onGPU(1)
	slot := cmem(t, 8)
	if rc := f.code(gpurt.StreamCreateWithFlags, uintptr(slot), 1); rc != 0 {
		t.Fatal(rc)
	}
	foreign := *(*uintptr)(slot)
	defer func() { onGPU(1); f.code(gpurt.StreamDestroy, foreign); onGPU(0) }()
	buf, err := d.Alloc(32)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// produce queues pattern seed into buf on the foreign stream, as C
	// would, and leaves the thread on GPU 0.
	produce := func(seed byte) {
		t.Helper()
		src := cmem(t, 32)
		copy(unsafe.Slice((*byte)(src), 32), Pattern(32, seed))
		onGPU(1)
		if rc := f.memcpy(uintptr(buf), uintptr(src), 32, rt.Table.Memcpy.HostToDevice, foreign); rc != 0 {
			t.Fatal(rc)
		}
		onGPU(0)
	}
	calls := func(ops ...gpurt.Op) []int64 {
		var n []int64
		for _, op := range ops {
			n = append(n, f.calls(rt.sym(op)))
		}
		return n
	}
	waitOps := []gpurt.Op{gpurt.StreamSynchronize, gpurt.EventRecord, gpurt.StreamWaitEvent, gpurt.EventSynchronize}
	read := func() []byte {
		t.Helper()
		dst := make([]byte, 32)
		if err := d.CopyToHost(dst, buf, 0, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		return dst
	}

	// Our stream waits for the foreign one on the device: the producer's
	// copy stays queued until our stream runs.
	produce(1)
	before := calls(waitOps...)
	if err := fsd.WaitForStream(foreign, s); err != nil {
		t.Fatal(err)
	}
	if got := calls(waitOps...); !slices.Equal(got, []int64{before[0], before[1] + 1, before[2] + 1, before[3]}) {
		t.Errorf("StreamSynchronize, EventRecord, StreamWaitEvent, EventSynchronize calls %v, were %v", got, before)
	}
	if n := f.pending(); n != 2 {
		t.Errorf("%d operations queued, want the producer's copy and our stream's wait", n)
	}
	if _, events, _ := f.live(); events != 0 {
		t.Errorf("%d events live: the one recorded on the foreign stream was not destroyed", events)
	}
	if got := read(); !bytes.Equal(got, Pattern(32, 1)) {
		t.Errorf("our stream read %v", got[:8])
	}

	// The host waits.
	produce(2)
	before = calls(waitOps...)
	if err := fsd.WaitForStream(foreign, nil); err != nil {
		t.Fatal(err)
	}
	if got := calls(waitOps...); got[0] != before[0]+1 || f.pending() != 0 {
		t.Errorf("host wait: calls %v (were %v), %d queued", got, before, f.pending())
	}
	if got := read(); !bytes.Equal(got, Pattern(32, 2)) {
		t.Errorf("read %v", got[:8])
	}

	// The foreign stream waits for our event: a read that C queues on it
	// after MakeStreamWait sees what our stream wrote.
	src := Pattern(32, 3)
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	if err := d.CopyToDevice(buf, 0, src, s); err != nil {
		t.Fatal(err)
	}
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if err := ev.Record(s); err != nil {
		t.Fatal(err)
	}
	onGPU(0)
	before = calls(waitOps...)
	if err := fsd.MakeStreamWait(foreign, ev.SyncEvent()); err != nil {
		t.Fatal(err)
	}
	if got := calls(waitOps...); !slices.Equal(got, []int64{before[0], before[1], before[2] + 1, before[3]}) || f.pending() != 2 {
		t.Errorf("MakeStreamWait: calls %v (were %v), %d queued", got, before, f.pending())
	}
	out := cmem(t, 32)
	onGPU(1)
	if rc := f.memcpy(uintptr(out), uintptr(buf), 32, rt.Table.Memcpy.DeviceToHost, foreign); rc != 0 {
		t.Fatal(rc)
	}
	if rc := f.code(gpurt.StreamSynchronize, foreign); rc != 0 {
		t.Fatal(rc)
	}
	onGPU(0)
	if got := unsafe.Slice((*byte)(out), 32); !bytes.Equal(got, Pattern(32, 3)) {
		t.Errorf("the foreign stream read %v", got[:8])
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}

	// 0 is the legacy default stream; no sync_event is nothing to wait
	// for; a NULL event handle is refused.
	if err := fsd.WaitForStream(0, s); err != nil {
		t.Errorf("legacy default stream: %v", err)
	}
	if err := fsd.MakeStreamWait(0, ev.SyncEvent()); err != nil {
		t.Errorf("legacy default stream waits: %v", err)
	}
	before = calls(waitOps...)
	if err := fsd.MakeStreamWait(foreign, 0); err != nil || !slices.Equal(calls(waitOps...), before) {
		t.Errorf("no sync_event: %v", err)
	}
	if err := fsd.MakeStreamWait(foreign, uintptr(cmem(t, 8))); err == nil {
		t.Error("NULL event handle accepted")
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}

	// A failed record is the runtime's error, and the event made for it is
	// destroyed all the same.
	f.fail(rt.sym(gpurt.EventRecord), 400, 0)
	err = fsd.WaitForStream(foreign, s)
	rt.wantRuntimeError(t, err, rt.sym(gpurt.EventRecord), 400, "invalid resource handle")
	if _, events, _ := f.live(); events != 1 { // ev
		t.Errorf("%d events live after a failed wait, want 1", events)
	}
	// A stream of another GPU is refused by the runtime.
	s0, err := ds[0].NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	err = ds[0].(device.ForeignStreams).WaitForStream(foreign, s0)
	rt.wantRuntimeError(t, err, rt.sym(gpurt.EventRecord), 400, "invalid resource handle")
}

// cmem is n bytes of C memory, freed when the test ends.
func cmem(t *testing.T, n uintptr) unsafe.Pointer {
	p, err := ffi.Calloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffi.Free(p) })
	return p
}

func testStreamMisuse(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 2)
	ds := f.Probe()
	d0, d1 := ds[0], ds[len(rt.Table.Kinds)]
	buf, _ := d0.Alloc(8)
	defer d0.Free(buf)
	cpuStream, _ := device.CPU.NewStream()
	if err := d0.CopyToDevice(buf, 0, []byte{1}, cpuStream); err == nil || !strings.Contains(err.Error(), "not a "+rt.Table.Title+" stream") {
		t.Errorf("CPU stream: %v", err)
	}
	s1, _ := d1.NewStream()
	if err := d0.CopyToDevice(buf, 0, []byte{1}, s1); err == nil || !strings.Contains(err.Error(), "device 1") {
		t.Errorf("stream of another device: %v", err)
	}
	// The host device and the device memory of one GPU share its streams.
	s0, _ := ds[rt.kind(gpurt.HostMemory)].NewStream()
	if err := d0.CopyToDevice(buf, 0, []byte{1}, s0); err != nil {
		t.Error(err)
	}
	for _, s := range []device.Stream{s0, s1} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if s0.Handle() != 0 || s0.Synchronize() == nil || d0.CopyToDevice(buf, 0, []byte{1}, s0) == nil {
		t.Error("stream usable after Close")
	}
	if err := s0.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Two devices used from many goroutines: the double refuses work on another
// device than the thread's current one, so this fails unless every call
// sequence sets the device on a locked thread. Slow C calls on few Ps make
// the scheduler move goroutines between threads (it hands a P blocked in C
// to another thread), as real runtime calls do.
func testConcurrentDevices(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 2)
	ds := f.Probe()
	nk := len(rt.Table.Kinds)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	f.Call("fake_cuda_set_delay", 30)
	defer f.Call("fake_cuda_set_delay", 0)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		d := ds[(g%2)*nk+g/2%nk]
		wg.Go(func() {
			for i := range 30 {
				if err := RoundTrip(d, 512, byte(g+i)); err != nil {
					errs <- fmt.Errorf("%v: %w", d, err)
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.calls(rt.sym(gpurt.SetDevice)); n < 16*30*5 {
		t.Errorf("%s called %d times", rt.sym(gpurt.SetDevice), n)
	}
}

// RoundTrip copies a pattern to a new buffer and back on a new stream.
func RoundTrip(d device.Device, n int, seed byte) error {
	p, err := d.Alloc(n)
	if err != nil {
		return err
	}
	defer d.Free(p)
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	src, dst := Pattern(n, seed), make([]byte, n)
	if err := d.CopyToDevice(p, 0, src, s); err != nil {
		return err
	}
	if err := d.CopyToHost(dst, p, 0, s); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	if !bytes.Equal(src, dst) {
		return errors.New("data differs after a round trip")
	}
	return nil
}

func testFaultAlloc(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	ds := f.Probe()
	for i, k := range rt.Table.Kinds {
		alloc := f.bound(append([]string{k.Alloc}, k.OlderAlloc...)...)
		f.fail(alloc, 2, 0)
		_, err := ds[i].Alloc(100)
		rt.wantRuntimeError(t, err, alloc, 2, "out of memory")
		f.wantLive(0, 0, 1)
	}
	// After n successful calls.
	alloc, free := rt.Table.Kinds[0].Alloc, rt.Table.Kinds[0].Free
	f.fail(alloc, 2, 2)
	var ps []device.Pointer
	for range 3 {
		p, err := ds[0].Alloc(8)
		if err != nil {
			rt.wantRuntimeError(t, err, alloc, 2, "out of memory")
			break
		}
		ps = append(ps, p)
	}
	if len(ps) != 2 {
		t.Errorf("%d allocations before the fault, want 2", len(ps))
	}
	for _, p := range ps {
		ds[0].Free(p)
	}
	// A failing free keeps the memory; freeing again works.
	p, _ := ds[0].Alloc(8)
	f.fail(free, 1, 0)
	rt.wantRuntimeError(t, ds[0].Free(p), free, 1, "invalid argument")
	if err := ds[0].Free(p); err != nil {
		t.Fatal(err)
	}
	// The thread's device cannot be set.
	f.fail(rt.sym(gpurt.SetDevice), 101, 0)
	_, err := ds[0].Alloc(8)
	rt.wantRuntimeError(t, err, rt.sym(gpurt.SetDevice), 101, "invalid device ordinal")
	f.wantLive(0, 0, 1)
}

func testFaultCopy(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	d := f.Probe()[0]
	buf, _ := d.Alloc(16)
	defer d.Free(buf)
	s, _ := d.NewStream()
	defer s.Close()
	mk := rt.Table.Memcpy
	toDevice, toHost := rt.copySym(gpurt.DeviceMemory, mk.HostToDevice), rt.copySym(gpurt.DeviceMemory, mk.DeviceToHost)
	onDevice, sync := rt.copySym(gpurt.DeviceMemory, mk.DeviceToDevice), rt.sym(gpurt.StreamSynchronize)
	src, dst := Pattern(16, 1), make([]byte, 16)
	after := 0
	if toHost == toDevice { // the runtime API: one function copies both ways
		after = 1
	}
	f.fail(toHost, 1, after)
	if err := d.CopyToDevice(buf, 0, src, s); err != nil {
		t.Fatal(err)
	}
	err := d.CopyToHost(dst, buf, 0, s)
	rt.wantRuntimeError(t, err, toHost, 1, "invalid argument")
	if !strings.Contains(err.Error(), "CopyToHost of 16 bytes") {
		t.Errorf("error lacks context: %v", err)
	}
	if f.pending() != 1 {
		t.Errorf("%d queued; the failed copy was queued", f.pending())
	}
	code, msg := 21, "invalid copy direction for memcpy"
	if rt.driver() { // no such code: the driver API infers no direction
		code, msg = 2, "out of memory"
	}
	f.fail(onDevice, code, 0)
	rt.wantRuntimeError(t, d.CopyOnDevice(buf, 0, buf, 8, 8, nil), onDevice, code, msg)
	f.fail(sync, 400, 0)
	rt.wantRuntimeError(t, s.Synchronize(), sync, 400, "invalid resource handle")
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func testFaultEvents(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	d := f.Probe()[0]
	heap := ffi.LiveAllocations()
	create, record, sync := rt.sym(gpurt.EventCreateWithFlags), rt.sym(gpurt.EventRecord), rt.sym(gpurt.EventSynchronize)
	wait, destroy := rt.sym(gpurt.StreamWaitEvent), rt.sym(gpurt.EventDestroy)
	f.fail(create, 2, 0)
	_, err := d.NewEvent()
	rt.wantRuntimeError(t, err, create, 2, "out of memory")
	if ffi.LiveAllocations() != heap {
		t.Error("a failed NewEvent leaked its slot")
	}
	f.wantLive(0, 0, 1)

	ev, _ := d.NewEvent()
	s, _ := d.NewStream()
	defer s.Close()
	f.fail(record, 400, 0)
	rt.wantRuntimeError(t, ev.Record(s), record, 400, "invalid resource handle")
	if err := ev.Record(s); err != nil {
		t.Fatal(err)
	}
	f.fail(sync, 400, 0)
	rt.wantRuntimeError(t, ev.Synchronize(), sync, 400, "invalid resource handle")
	f.fail(sync, 400, 0)
	rt.wantRuntimeError(t, d.WaitSyncEvent(context.Background(), ev.SyncEvent(), nil), sync, 400, "invalid resource handle")
	f.fail(wait, 400, 0)
	rt.wantRuntimeError(t, d.WaitSyncEvent(context.Background(), ev.SyncEvent(), s), wait, 400, "invalid resource handle")
	f.closeAfterFault(destroy, ev, func() bool { return ev.SyncEvent() != 0 })
	if ffi.LiveAllocations() != heap {
		t.Error("event slot leaked")
	}
}

// A host wait with a context that can be done polls the event: it returns
// the context's error while the device is stalled, and succeeds once the
// work runs; without such a context it blocks in EventSynchronize.
func testHostWaitContext(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	host := f.Probe()[rt.kind(gpurt.HostMemory)]
	s, _ := host.NewStream()
	defer s.Close()
	ev, err := host.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	buf, _ := host.Alloc(64)
	defer host.Free(buf)
	src := Pattern(64, 9)
	queue := func() {
		t.Helper()
		if err := host.CopyToDevice(buf, 0, src, s); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(s); err != nil {
			t.Fatal(err)
		}
	}
	query, sync := rt.sym(gpurt.EventQuery), rt.sym(gpurt.EventSynchronize)

	queue()
	f.Call("fake_cuda_hold", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := host.WaitSyncEvent(ctx, ev.SyncEvent(), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on a stalled device: %v, want context.DeadlineExceeded", err)
	}
	if f.calls(query) < 1 || f.calls(sync) != 0 || f.pending() == 0 {
		t.Errorf("%s %d calls, %s %d, %d pending: want polls only, work still queued", query, f.calls(query), sync, f.calls(sync), f.pending())
	}
	f.Call("fake_cuda_hold", 0)
	live, stop := context.WithCancel(context.Background())
	defer stop()
	if err := host.WaitSyncEvent(live, ev.SyncEvent(), nil); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 0 || !bytes.Equal(HostBytes(buf, 64), src) {
		t.Error("the copy is not done after a successful wait")
	}

	// A failing query is the runtime's error, not a wait forever.
	queue()
	f.fail(query, 400, 0)
	rt.wantRuntimeError(t, host.WaitSyncEvent(live, ev.SyncEvent(), nil), query, 400, "invalid resource handle")

	// context.Background can never be done: the blocking call, no polls.
	polls := f.calls(query)
	queue()
	if err := host.WaitSyncEvent(context.Background(), ev.SyncEvent(), nil); err != nil {
		t.Fatal(err)
	}
	if f.calls(query) != polls || f.calls(sync) != 1 {
		t.Errorf("Background wait: %d polls, %d syncs; want 0 and 1", f.calls(query)-polls, f.calls(sync))
	}
}

// A producer's event that was never recorded has nothing to wait for: CUDA
// and HIP document EventQuery's answer as success, chipStar answers
// NotReady for ever. A host wait that can be cancelled (it polls) ends at
// once under both answers, still waits for an event whose work runs, and
// leaves no stream or event of its own behind, even when it gives up.
func testUnrecordedEvent(t *testing.T, rt Runtime) {
	for _, notReady := range []uintptr{0, 1} {
		t.Run(fmt.Sprintf("NotReady=%d", notReady), func(t *testing.T) {
			f := NewFake(t, rt, 1)
			f.Call("fake_cuda_set_unrecorded_not_ready", notReady)
			host := f.Probe()[rt.kind(gpurt.HostMemory)]
			ev, err := host.NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			s, err := host.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, events, streams := f.live()
			ours := func(when string) {
				t.Helper()
				if _, e, st := f.live(); e != events || st != streams {
					t.Errorf("%s: %d events, %d streams live; want %d, %d", when, e, st, events, streams)
				}
			}
			live, stop := context.WithCancel(context.Background())
			defer stop()
			// A poll that never ends would meet this deadline.
			never, cancelNever := context.WithTimeout(live, 10*time.Second)
			defer cancelNever()
			if err := host.WaitSyncEvent(never, ev.SyncEvent(), nil); err != nil {
				t.Fatalf("wait on an event never recorded: %v", err)
			}
			ours("after the wait on an event never recorded")

			buf, err := host.Alloc(64)
			if err != nil {
				t.Fatal(err)
			}
			defer host.Free(buf)
			src := Pattern(64, 3)
			if err := host.CopyToDevice(buf, 0, src, s); err != nil {
				t.Fatal(err)
			}
			if err := ev.Record(s); err != nil {
				t.Fatal(err)
			}
			f.Call("fake_cuda_hold", 1)
			short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if err := host.WaitSyncEvent(short, ev.SyncEvent(), nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("wait on a stalled event: %v, want context.DeadlineExceeded", err)
			}
			if f.pending() == 0 {
				t.Error("giving up ran the stalled work")
			}
			ours("after giving up")
			f.Call("fake_cuda_hold", 0)
			if err := host.WaitSyncEvent(live, ev.SyncEvent(), nil); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(HostBytes(buf, 64), src) {
				t.Error("the copy is not done after a successful wait")
			}
			ours("after the wait")
		})
	}
}

func testFaultStreams(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	d := f.Probe()[0]
	create, destroy := rt.sym(gpurt.StreamCreateWithFlags), rt.sym(gpurt.StreamDestroy)
	f.fail(create, 2, 0)
	_, err := d.NewStream()
	rt.wantRuntimeError(t, err, create, 2, "out of memory")
	f.wantLive(0, 0, 1)
	s, _ := d.NewStream()
	f.closeAfterFault(destroy, s, func() bool { return s.Handle() != 0 })
}

// closeAfterFault checks that a Close whose destroy call fails leaves c
// whole (usable says so), to close again.
func (f *Fake) closeAfterFault(destroy string, c interface{ Close() error }, usable func() bool) {
	f.t.Helper()
	f.fail(destroy, 400, 0)
	f.rt.wantRuntimeError(f.t, c.Close(), destroy, 400, "invalid resource handle")
	if !usable() {
		f.t.Fatalf("%T lost after a failed Close", c)
	}
	if err := c.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// A probe that fails half way gives back what it made, and stays failed.
func testFaultProbe(t *testing.T, rt Runtime) {
	type fault struct {
		op   gpurt.Op
		code int
		n    int
		msg  string
	}
	faults := []fault{
		{gpurt.DriverGetVersion, 1, 0, "invalid argument"},
		{gpurt.GetDeviceCount, 2, 0, "out of memory"},
		{gpurt.StreamCreateWithFlags, 2, 1, "out of memory"}, // the second device's default stream
		{gpurt.SetDevice, 101, 1, "invalid device ordinal"},
	}
	if rt.driver() { // and each call of the second device that takes or reads
		faults = append(faults, fault{gpurt.Init, 101, 0, "invalid device ordinal"},
			fault{gpurt.DeviceGet, 101, 1, "invalid device ordinal"},
			fault{gpurt.PrimaryCtxRetain, 2, 1, "out of memory"},
			fault{gpurt.DeviceGetName, 1, 1, "invalid argument"})
	} else {
		faults = append(faults, fault{gpurt.RuntimeGetVersion, 3, 0, "unrecognized error code"},
			fault{gpurt.GetDeviceProperties, 101, 1, "invalid device ordinal"})
	}
	if len(rt.Table.Attributes) > 0 { // the first attribute of the second device
		faults = append(faults, fault{gpurt.DeviceGetAttribute, 1, len(rt.Table.Attributes), "invalid argument"})
	}
	for _, c := range faults {
		call := rt.sym(c.op)
		t.Run(call, func(t *testing.T) {
			f := NewFake(t, rt, 2)
			f.fail(call, c.code, c.n)
			b := rt.backend(f.path)
			_, err := b.Probe(context.Background())
			rt.wantRuntimeError(t, err, call, c.code, c.msg)
			f.wantLive(0, 0, 0)
			if n := f.contexts(); n != 0 {
				t.Errorf("%d primary contexts still retained", n)
			}
			version := rt.sym(gpurt.DriverGetVersion)
			calls := f.calls(version)
			if _, again := b.Probe(context.Background()); again != err || f.calls(version) != calls {
				t.Errorf("second probe: %v", again)
			}
		})
	}
}

func testNoDevice(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 0)
	info, err := rt.backend(f.path).Probe(context.Background())
	if !errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("zero devices: %v", err)
	}
	rt.wantRuntimeError(t, err, rt.countSym(), 100, "no CUDA-capable device is detected")
	if want := fmt.Sprintf("%s: no device (%s, 100)", rt.Table.Name, f.errorName(100)); !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
	if info.Library != f.path || info.Version == "" || len(info.Devices) != 0 {
		t.Errorf("info %+v", info)
	}
}

// errorName is the double's name for an error code.
func (f *Fake) errorName(code int) string {
	if !f.rt.driver() {
		return ffi.GoString(f.Call(f.rt.sym(gpurt.GetErrorName), uintptr(code)))
	}
	slot := cmem(f.t, 8)
	if rc := f.Call(f.rt.sym(gpurt.GetErrorName), uintptr(code), uintptr(slot)); int32(rc) != 0 {
		return ""
	}
	return ffi.GoString(*(*uintptr)(slot))
}

func testDriverTooOld(t *testing.T, rt Runtime) {
	if rt.OldDriver == 0 {
		t.Skip("no driver version is too old for this runtime (the driver API is the driver; chipStar reports a constant)")
	}
	f := NewFake(t, rt, 1)
	f.Call("fake_cuda_set_driver_version", uintptr(rt.OldDriver))
	info, err := rt.backend(f.path).Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "driver too old") || errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("old driver: %v", err)
	}
	rt.wantRuntimeError(t, err, rt.sym(gpurt.GetDeviceCount), 35, "CUDA driver version is insufficient for CUDA runtime version")
	if info.Version != rt.OldVersion {
		t.Errorf("version %q", info.Version)
	}

	if rt.Table.DriverVersionIsRuntime {
		// DriverGetVersion answers a constant of the runtime (HIP): the
		// error says the driver is too old or absent whatever it answers,
		// even a version newer than the runtime's.
		for _, v := range []int{0, rt.OldDriver, -1} {
			f = NewFake(t, rt, 1)
			if v >= 0 {
				f.Call("fake_cuda_set_driver_version", uintptr(v))
			} else {
				f.fail(rt.sym(gpurt.GetDeviceCount), 35, 0)
			}
			_, err = rt.backend(f.path).Probe(context.Background())
			if msg := fmt.Sprint(err); !errors.Is(err, device.ErrRuntime) || !strings.Contains(msg, "driver too old or absent") ||
				!strings.Contains(msg, rt.Table.Driver) || strings.Contains(msg, "supports") {
				t.Errorf("driver version %d: %v; want the driver too old or absent, without its version", v, err)
			}
		}
		return
	}
	f = NewFake(t, rt, 1)
	f.Call("fake_cuda_set_driver_version", 0)
	_, err = rt.backend(f.path).Probe(context.Background())
	if !errors.Is(err, device.ErrNoDevice) || !strings.Contains(err.Error(), "no "+rt.Table.Driver) {
		t.Fatalf("no driver: %v", err)
	}
}

// A runtime newer than the driver supports is skipped for the next
// candidate (libcudart.so.13 on a CUDA 12 driver, then libcudart.so.12),
// and named with why; when no candidate serves, the error is the first's
// and the others are named.
func testSkipTooNew(t *testing.T, rt Runtime) {
	if rt.NewFake == "" {
		t.Skip("no runtime is too new for the driver (the driver API is the driver; chipStar reports a constant)")
	}
	newer := newFake(t, rt, rt.NewFake, 1)
	f := NewFake(t, rt, 1)
	// A library without the runtime's functions is skipped too.
	paths := []string{newer.path, ffi.CLibrary, f.path}
	b := rt.backend(paths...)
	info, err := b.Probe(context.Background())
	if err != nil {
		t.Fatalf("Probe: %v; want the older runtime, which the driver supports", err)
	}
	defer b.Close()
	if info.Library != f.path || info.Version != rt.Version || len(info.Devices) != len(rt.Table.Kinds) {
		t.Errorf("info %+v; want %s's devices", info, f.path)
	}
	if len(info.Skipped) != len(paths)-1 || !strings.HasPrefix(info.Skipped[0], newer.path+": driver too old") {
		t.Fatalf("skipped %q; want %s named as too new for the driver", info.Skipped, newer.path)
	}
	if !strings.Contains(info.Skipped[1], filepath.Base(ffi.CLibrary)+": ") || !strings.Contains(info.Skipped[1], "lacks") {
		t.Errorf("skipped %q; want %s named as lacking functions", info.Skipped, ffi.CLibrary)
	}
	if d, ok := info.Devices[0].(Device); !ok || RoundTrip(d, 64, 3) != nil {
		t.Errorf("device %v does not work", info.Devices[0])
	}

	// Every candidate too new: the newest's error, the other skipped.
	f.Call("fake_cuda_set_driver_version", uintptr(rt.OldDriver))
	info, err = rt.backend(newer.path, f.path).Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "driver too old") || !strings.Contains(err.Error(), rt.sym(gpurt.GetDeviceCount)) {
		t.Fatalf("both too new: %v", err)
	}
	if info.Library != newer.path || len(info.Skipped) != 1 || !strings.HasPrefix(info.Skipped[0], f.path+": driver too old") {
		t.Errorf("both too new: info %+v", info)
	}
}

// Pinned host memory where it is Optional: a runtime with only the newest
// names of its allocator serves it, one with only the older names too
// (the fallback), and one with neither still serves device memory while
// its host memory's Alloc and Free fail with ErrMissingSymbol.
func testHostAllocFallback(t *testing.T, rt Runtime) {
	h := rt.kind(gpurt.HostMemory)
	if h < 0 || rt.NoHostFake == "" {
		t.Skip("pinned host memory is not optional for this runtime")
	}
	k := rt.Table.Kinds[h]
	hostWorks := func(t *testing.T, name, alloc string) {
		f := newFake(t, rt, name, 1)
		f.Call("fake_cuda_set_driver_version", 0x7fffffff)
		ds := f.Probe()
		if err := RoundTrip(ds[h], 64, 5); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := f.calls(alloc); n != 1 {
			t.Errorf("%s: %s called %d times, want 1", name, alloc, n)
		}
	}
	t.Run("Newest", func(t *testing.T) {
		f := newFake(t, rt, rt.NewFake, 1)
		for _, old := range append(slices.Clone(k.OlderAlloc), k.OlderFree...) {
			if _, err := f.lib.Symbol(old); err == nil {
				t.Fatalf("%s has %s: not the double this test needs", rt.NewFake, old)
			}
		}
		hostWorks(t, rt.NewFake, k.Alloc)
	})
	t.Run("Older", func(t *testing.T) {
		f := newFake(t, rt, rt.OldFake, 1)
		if _, err := f.lib.Symbol(k.Alloc); err == nil {
			t.Fatalf("%s has %s: not the double this test needs", rt.OldFake, k.Alloc)
		}
		hostWorks(t, rt.OldFake, k.OlderAlloc[len(k.OlderAlloc)-1])
	})
	t.Run("Neither", func(t *testing.T) {
		f := newFake(t, rt, rt.NoHostFake, 1)
		ds := f.Probe()
		if len(ds) != len(rt.Table.Kinds) {
			t.Fatalf("devices %v", ds)
		}
		if err := RoundTrip(ds[0], 64, 7); err != nil {
			t.Fatalf("device memory: %v", err)
		}
		_, err := ds[h].Alloc(64)
		msg := fmt.Sprint(err)
		if !errors.Is(err, device.ErrMissingSymbol) || !strings.Contains(msg, k.Alloc) || !strings.Contains(msg, "pinned host memory") {
			t.Errorf("host Alloc: %v; want ErrMissingSymbol naming %s and the memory", err, k.Alloc)
		}
		if err := ds[h].Free(0x1000); !errors.Is(err, device.ErrMissingSymbol) {
			t.Errorf("host Free: %v; want ErrMissingSymbol", err)
		}
		if err := ds[h].Free(0); err != nil {
			t.Errorf("host Free(0): %v", err)
		}
	})
}

// The old double lacks the managed allocator and the newest properties
// call: the first is needed where the table offers managed memory, the
// second has a fallback.
func testOldRuntime(t *testing.T, rt Runtime) {
	if rt.OldFake == "" {
		t.Skip("no double of an older library")
	}
	f := newFake(t, rt, rt.OldFake, 1)
	b := rt.backend(f.path)
	defer b.Close()
	_, err := b.Probe(context.Background())
	if m := rt.kind(gpurt.ManagedMemory); m >= 0 {
		if !errors.Is(err, device.ErrMissingSymbol) || errors.Is(err, device.ErrNotFound) {
			t.Fatalf("old runtime: %v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, rt.Table.Kinds[m].Alloc) || strings.Contains(msg, "Properties") {
			t.Errorf("message %q", msg)
		}
		return
	}
	if err != nil {
		t.Fatalf("old runtime: %v", err)
	}
	names := rt.Table.Names(gpurt.GetDeviceProperties)
	if fallback := names[len(names)-1]; f.calls(fallback) != 1 {
		t.Errorf("%s called %d times, want the fallback used", fallback, f.calls(fallback))
	}
}
