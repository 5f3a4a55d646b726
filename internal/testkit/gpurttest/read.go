package gpurttest

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// ReadValues on the double: the values come back behind the producer's
// event, waited for on the device (the staging stream waits; the host
// only for the reads: one round trip, no copy into pageable memory, with
// one batched copy where the double has it); the staging is made once and
// grows for a larger read; a ctx that ends first ends a host wait with its
// error; a failed copy leaves the staging usable; imports at once from
// many goroutines each get their own values; and closing the backend
// gives everything back.
func testReadValues(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	ds := f.Probe()
	d := ds[rt.kind(gpurt.DeviceMemory)]
	vr, ok := d.(device.ValueReader)
	if !ok {
		t.Fatalf("%T is no device.ValueReader", d)
	}
	const n = 512
	buf, err := d.Alloc(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	vals := make([]byte, 8*n)
	for i := range n {
		binary.NativeEndian.PutUint64(vals[8*i:], uint64(i*1000+7))
	}
	// The producer: a copy still queued on its stream, its event recorded
	// after it. Nothing runs it before someone waits.
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	produce := func() {
		t.Helper()
		if err := d.CopyToDevice(buf, 0, vals, s); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(s); err != nil {
			t.Fatal(err)
		}
	}
	reads := func(k int) []device.ValueRead {
		r := make([]device.ValueRead, k)
		for i := range r {
			r[i] = device.ValueRead{Ptr: buf, Off: int64(8 * ((i * 7) % n)), Width: []int{2, 4, 8}[i%3]}
		}
		return r
	}
	check := func(what string, rs []device.ValueRead) {
		t.Helper()
		for i, r := range rs {
			want := device.ValueRead{Width: r.Width}
			want.Set(vals[r.Off:])
			if r.Value != want.Value {
				t.Fatalf("%s: read %d: %d, want %d", what, i, r.Value, want.Value)
			}
		}
	}
	costs, _ := CostsOf(f.path)

	produce()
	c0 := costs()
	rs := reads(6)
	if err := vr.ReadValues(context.Background(), []uintptr{ev.SyncEvent()}, rs); err != nil {
		t.Fatal(err)
	}
	check("behind the event", rs)
	c := costs().Minus(c0)
	if c.RoundTrips != 1 || c.PageableCopies != 0 || c.StreamsMade != 1 || c.DeviceSwitches != 1 ||
		(f.has(rt.sym(gpurt.MemcpyBatchAsync)) != (c.BatchedCopies == 1)) {
		t.Errorf("the first ReadValues cost %v; want 1 round trip, the staging's stream made, 1 switch, a batched copy where the double has one", c)
	}

	// Again, with more values than the staging holds: it grows, no stream is made.
	produce()
	c0 = costs()
	rs = reads(200)
	if err := vr.ReadValues(context.Background(), []uintptr{ev.SyncEvent()}, rs); err != nil {
		t.Fatal(err)
	}
	check("grown", rs)
	if c := costs().Minus(c0); c.RoundTrips != 1 || c.StreamsMade != 0 {
		t.Errorf("a larger ReadValues cost %v; want 1 round trip and no stream made", c)
	}

	// A producer that does not finish, and a ctx that ends first.
	produce()
	f.Call("fake_cuda_hold", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	err = vr.ReadValues(ctx, []uintptr{ev.SyncEvent()}, reads(3))
	cancel()
	f.Call("fake_cuda_hold", 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadValues behind a held event, ctx ending: %v; want context.DeadlineExceeded", err)
	}
	live, stop := context.WithCancel(context.Background())
	rs = reads(3)
	err = vr.ReadValues(live, []uintptr{ev.SyncEvent()}, rs)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	check("with a ctx that can be done", rs)

	// A copy that fails: the error is the runtime's, and the staging serves again.
	copySym := rt.copySym(gpurt.DeviceMemory, rt.Table.Memcpy.DeviceToHost)
	if f.has(rt.sym(gpurt.MemcpyBatchAsync)) {
		copySym = rt.sym(gpurt.MemcpyBatchAsync)
	}
	f.fail(f.bound(copySym), 2, 0)
	var re *device.RuntimeError
	if err := vr.ReadValues(context.Background(), nil, reads(4)); !errors.As(err, &re) || re.Code != 2 {
		t.Fatalf("ReadValues with %s failing: %v", copySym, err)
	}
	c0 = costs()
	rs = reads(4)
	if err := vr.ReadValues(context.Background(), nil, rs); err != nil {
		t.Fatal(err)
	}
	check("after a failed copy", rs)
	if c := costs().Minus(c0); c.StreamsMade != 0 {
		t.Errorf("after a failed copy: %v; want the staging reused", c)
	}

	// Many at once: each gets its own values; stagings made at most one each.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				rs := reads(1 + g*5)
				if err := vr.ReadValues(context.Background(), nil, rs); err != nil {
					errs <- err
					return
				}
				for i, r := range rs {
					want := device.ValueRead{Width: r.Width}
					want.Set(vals[r.Off:])
					if r.Value != want.Value {
						errs <- errors.New("a concurrent read got another's value")
						_ = i
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// has reports whether the double exports name.
func (f *Fake) has(name string) bool {
	_, err := f.lib.Symbol(name)
	return err == nil
}
