package opencl_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// peer is testdata/c/opencl_peer.c, initialised with the library we loaded.
type peer struct {
	produce, buffer, event, complete, openGate, openGateAfter, release, consume func(...uintptr) uintptr
	benchNew, benchRun, benchFree                                               func(...uintptr) uintptr
}

func loadPeer(t testing.TB) *peer {
	t.Helper()
	info := probe(t)
	lib := ctest.Library(t, "opencl_peer")
	f := func(name string) func(...uintptr) uintptr { return ctest.Func(t, lib, name) }
	ctest.InitRuntime(t, lib, "peer_init", info.Library)
	return &peer{
		produce: f("peer_produce"), buffer: f("peer_produced_buffer"), event: f("peer_produced_event"),
		complete: f("peer_event_complete"), openGate: f("peer_open_gate"), openGateAfter: f("peer_open_gate_after"),
		release: f("peer_release"), consume: f("peer_consume"),
		benchNew: f("peer_bench_new"), benchRun: f("peer_bench_run"), benchFree: f("peer_bench_free"),
	}
}

func svmFlag(d *opencl.Device) uintptr {
	if d.UsesSVM() {
		return 1
	}
	return 0
}

func int32s(n int, seed int32) []byte {
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(seed+int32(i)))
	}
	return b
}

// produce has C make a gated buffer of n int32 on d's context and default
// queue; it returns the handle, the buffer and its sync event (cl_event*).
func (p *peer) produceOn(t *testing.T, d *opencl.Device, n int, seed int32) (h uintptr, buf device.Pointer, ev uintptr) {
	t.Helper()
	errp, err := ffi.Calloc(4)
	must(t, err)
	defer ffi.Free(errp)
	h = p.produce(d.Context(), d.CommandQueue(), svmFlag(d), uintptr(n), uintptr(seed), uintptr(errp))
	if h == 0 {
		t.Fatalf("peer_produce failed: %d", *(*int32)(errp))
	}
	return h, device.Pointer(p.buffer(h)), p.event(h)
}

// hostWaits checks that wait, named call, blocks the host until the gate
// of h opens (from another thread, 50 ms later) and the produced data is
// complete. The proof is the producer's marker, complete when wait returns
// (it completes only once the gate is open), not a reading of the clock.
func (p *peer) hostWaits(t *testing.T, h uintptr, call string, wait func() error) {
	t.Helper()
	if r := int32(p.openGateAfter(h, 50)); r != 0 {
		t.Fatal("pthread_create failed")
	}
	must(t, wait())
	if c := int32(p.complete(h)); c != 1 {
		t.Fatalf("the producer's work is not complete after %s: %d", call, c)
	}
}

// TestCProducer: C produces a device buffer whose data arrives only when a
// gate opens; Go must wait on the cl_event it hands over.
func TestCProducer(t *testing.T) {
	p := loadPeer(t)
	const n = 100_003
	for mode, d := range modes(t) {
		t.Run(mode+"/stream", func(t *testing.T) {
			h, buf, ev := p.produceOn(t, d, n, 1000)
			defer p.release(h)
			s, err := d.NewStream()
			must(t, err)
			defer s.Close()
			must(t, d.WaitSyncEvent(context.Background(), ev, s))
			back := make([]byte, 4*n)
			must(t, d.CopyToHost(back, buf, 0, s))
			part := make([]byte, 4*10)
			must(t, d.CopyToHost(part, buf, 4*50, s))
			time.Sleep(20 * time.Millisecond)
			if c := int32(p.complete(h)); c != 0 {
				t.Fatalf("producer's event complete (%d) before the gate opened", c)
			}
			if !bytes.Equal(back, make([]byte, 4*n)) {
				t.Fatal("the read did not wait for the producer's event")
			}
			if r := int32(p.openGate(h)); r != 0 {
				t.Fatalf("open gate: %d", r)
			}
			must(t, s.Synchronize())
			if !bytes.Equal(back, int32s(n, 1000)) || !bytes.Equal(part, int32s(10, 1050)) {
				t.Fatal("values from C differ")
			}
		})
		t.Run(mode+"/host", func(t *testing.T) {
			h, buf, ev := p.produceOn(t, d, n, -7)
			defer p.release(h)
			p.hostWaits(t, h, "WaitSyncEvent", func() error { return d.WaitSyncEvent(context.Background(), ev, nil) })
			back := make([]byte, 4*n)
			must(t, d.CopyToHost(back, buf, 0, nil))
			must(t, syncDefault(d))
			if !bytes.Equal(back, int32s(n, -7)) {
				t.Fatal("values from C differ")
			}
		})
		// The gate stays shut: a host wait bounded by a context gives up
		// with its error, and the event is still usable afterwards. Then
		// the same wait with a live context polls until the gate opens.
		t.Run(mode+"/host-context", func(t *testing.T) {
			h, buf, ev := p.produceOn(t, d, n, 11)
			defer p.release(h)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if err := d.WaitSyncEvent(ctx, ev, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("wait on an event that never completes: %v, want context.DeadlineExceeded", err)
			}
			if c := int32(p.complete(h)); c != 0 {
				t.Fatalf("producer's event complete (%d) with the gate shut", c)
			}
			live, stop := context.WithCancel(context.Background())
			defer stop()
			p.hostWaits(t, h, "WaitSyncEvent(ctx)", func() error { return d.WaitSyncEvent(live, ev, nil) })
			back := make([]byte, 4*n)
			must(t, d.CopyToHost(back, buf, 0, nil))
			must(t, syncDefault(d))
			if !bytes.Equal(back, int32s(n, 11)) {
				t.Fatal("values from C differ")
			}
		})
	}
}

// TestCConsumer: Go writes on a stream of its own and hands C the buffer
// and the cl_event*; C reads on the default queue behind that event.
func TestCConsumer(t *testing.T) {
	p := loadPeer(t)
	for mode, d := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, err := d.NewStream()
			must(t, err)
			defer s.Close()
			e, err := d.NewEvent()
			must(t, err)
			defer e.Close()
			for _, c := range []struct{ n, off int }{{1, 0}, {1000, 0}, {4 << 20, 12}, {33, 4096}} {
				buf, err := d.Alloc(c.off + 4*c.n)
				must(t, err)
				src := int32s(c.n, int32(c.n))
				must(t, d.CopyToDevice(buf, c.off, src, s))
				must(t, e.Record(s))
				bad := int32(p.consume(d.CommandQueue(), uintptr(buf), svmFlag(d), uintptr(c.off), uintptr(c.n),
					uintptr(c.n), e.SyncEvent()))
				if bad != 0 {
					t.Fatalf("n %d off %d: C consumer reports %d", c.n, c.off, bad)
				}
				must(t, s.Synchronize())
				must(t, d.Free(buf))
			}
		})
	}
}

// TestForeignStreams: a command queue named only by its handle (the
// device's default queue, on which C produces behind a gate) and our
// streams wait for each other on the device, or the host waits.
func TestForeignStreams(t *testing.T) {
	p := loadPeer(t)
	const n = 10_007
	for mode, d := range modes(t) {
		var fs device.ForeignStreams = d
		q := d.CommandQueue()
		t.Run(mode+"/stream waits for the queue", func(t *testing.T) {
			h, buf, _ := p.produceOn(t, d, n, 5)
			defer p.release(h)
			defer p.openGate(h) // a failed test must not leave the gate closed: release waits
			s, err := d.NewStream()
			must(t, err)
			defer s.Close()
			must(t, fs.WaitForStream(q, s))         // returns with the gate closed: no host wait
			back := bytes.Repeat([]byte{0xA5}, 4*n) // a read that does not wait overwrites it
			must(t, d.CopyToHost(back, buf, 0, s))
			time.Sleep(20 * time.Millisecond)
			if !bytes.Equal(back, bytes.Repeat([]byte{0xA5}, 4*n)) {
				t.Fatal("the read on the stream did not wait for the queue's work")
			}
			if r := int32(p.openGate(h)); r != 0 {
				t.Fatalf("open gate: %d", r)
			}
			must(t, s.Synchronize())
			if !bytes.Equal(back, int32s(n, 5)) {
				t.Fatal("values from C differ")
			}
		})
		t.Run(mode+"/host waits for the queue", func(t *testing.T) {
			h, _, _ := p.produceOn(t, d, n, 6)
			defer p.release(h)
			p.hostWaits(t, h, "WaitForStream", func() error { return fs.WaitForStream(q, nil) })
		})
		t.Run(mode+"/queue waits for an event", func(t *testing.T) {
			s, err := d.NewStream()
			must(t, err)
			defer s.Close()
			errp, err := ffi.Calloc(4)
			must(t, err)
			defer ffi.Free(errp)
			// C produces on our stream's queue, behind its gate; our event
			// marks the end of that work.
			h := p.produce(d.Context(), s.Handle(), svmFlag(d), n, 7, uintptr(errp))
			if h == 0 {
				t.Fatalf("peer_produce failed: %d", *(*int32)(errp))
			}
			defer p.release(h)
			defer p.openGate(h)
			e, err := d.NewEvent()
			must(t, err)
			defer e.Close()
			must(t, e.Record(s))
			must(t, fs.MakeStreamWait(q, e.SyncEvent()))
			back := bytes.Repeat([]byte{0xA5}, 4*n)
			must(t, d.CopyToHost(back, device.Pointer(p.buffer(h)), 0, nil)) // on the default queue: q
			time.Sleep(20 * time.Millisecond)
			if !bytes.Equal(back, bytes.Repeat([]byte{0xA5}, 4*n)) {
				t.Fatal("the read on the queue did not wait for the event")
			}
			if r := int32(p.openGate(h)); r != 0 {
				t.Fatalf("open gate: %d", r)
			}
			must(t, syncDefault(d))
			if !bytes.Equal(back, int32s(n, 7)) {
				t.Fatal("values from C differ")
			}
		})
		t.Run(mode+"/refusals", func(t *testing.T) {
			if err := fs.MakeStreamWait(q, 0); err != nil {
				t.Errorf("no event: %v", err)
			}
			e, err := d.NewEvent()
			must(t, err)
			defer e.Close()
			if err := fs.MakeStreamWait(q, e.SyncEvent()); err != nil { // never recorded
				t.Errorf("an event never recorded: %v", err)
			}
			must(t, e.Record(nil))
			if err := fs.MakeStreamWait(0, e.SyncEvent()); err == nil {
				t.Error("MakeStreamWait on a NULL queue")
			}
			if err := fs.WaitForStream(0, nil); err == nil {
				t.Error("WaitForStream on a NULL queue")
			}
		})
	}
}

// ReadValues reads behind the producer's event: a C producer's values
// written behind a gate come back only once the gate opens (from another
// thread, later), whatever the buffer mode; with a ctx that is done first,
// the read gives up with its error and the producer is untouched.
func TestReadValuesWaitsForProducer(t *testing.T) {
	p := loadPeer(t)
	const n = 10_007
	for mode, d := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h, buf, ev := p.produceOn(t, d, n, 1000)
			defer p.release(h)
			reads := []device.ValueRead{{Ptr: buf, Off: 0, Width: 4}, {Ptr: buf, Off: 4 * 50, Width: 4}, {Ptr: buf, Off: 4 * (n - 1), Width: 4}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if err := d.ReadValues(ctx, []uintptr{ev}, reads); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("ReadValues behind a gate that stays shut: %v, want context.DeadlineExceeded", err)
			}
			if r := int32(p.openGateAfter(h, 50)); r != 0 {
				t.Fatal("pthread_create failed")
			}
			must(t, d.ReadValues(context.Background(), []uintptr{ev}, reads))
			if c := int32(p.complete(h)); c != 1 {
				t.Fatalf("the producer's work is not complete after ReadValues: %d", c)
			}
			for i, want := range []int64{1000, 1050, 1000 + n - 1} {
				if reads[i].Value != want {
					t.Errorf("read %d: %d, want %d", i, reads[i].Value, want)
				}
			}
		})
	}
}
