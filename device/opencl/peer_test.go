package opencl_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/ffi"
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
	path, err := ffi.CString(info.Library)
	must(t, err)
	defer ffi.Free(path)
	if r := int32(f("peer_init")(uintptr(path))); r != 0 {
		t.Fatalf("peer_init(%s) = %d", info.Library, r)
	}
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
			must(t, d.WaitSyncEvent(ev, s))
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
			start := time.Now()
			if r := int32(p.openGateAfter(h, 50)); r != 0 {
				t.Fatal("pthread_create failed")
			}
			must(t, d.WaitSyncEvent(ev, nil))
			if el := time.Since(start); el < 40*time.Millisecond {
				t.Fatalf("WaitSyncEvent returned after %v, before the gate opened", el)
			}
			if c := int32(p.complete(h)); c != 1 {
				t.Fatalf("event not complete after WaitSyncEvent: %d", c)
			}
			back := make([]byte, 4*n)
			must(t, d.CopyToHost(back, buf, 0, nil))
			must(t, syncDefault(d))
			if !bytes.Equal(back, int32s(n, -7)) {
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
