package gpurttest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// Every call of the runtime that a probe and a day's work make can fail:
// each call of each bound function is made to fail in turn. The error is
// the runtime's, naming that function, and everything taken before (memory,
// streams, events, primary contexts, C memory) is given back, a failed
// release given back on its second try, as a caller would retry it.
func testEveryCallFails(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 2)
	var names []string
	for _, op := range gpurt.Ops() {
		names = append(names, rt.Table.Names(op)...)
	}
	for _, k := range rt.Table.Kinds {
		names = append(names, k.Alloc, k.Free)
		names = append(names, k.OlderAlloc...)
		names = append(names, k.OlderFree...)
	}
	counts := map[string]int64{}
	if err := dayOfWork(rt, f.path); err != nil {
		t.Fatalf("without faults: %v", err)
	}
	for _, n := range names {
		if c := f.calls(n); c > 0 {
			counts[n] = c
		}
	}
	if len(counts) < 12 {
		t.Fatalf("the work called only %v", counts)
	}
	const code = 2 // out of memory, in every runtime's numbering
	total := 0
	defer func() { t.Logf("%d faults in %d functions", total, len(counts)) }()
	for name, c := range counts {
		for k := range c {
			total++
			f := NewFake(t, rt, 2)
			heap := ffi.LiveAllocations()
			f.fail(name, code, int(k))
			err := dayOfWork(rt, f.path)
			var re *device.RuntimeError
			if !errors.As(err, &re) || re.Call != name || re.Code != code || !errors.Is(err, device.ErrRuntime) {
				t.Errorf("%s failing at call %d of %d: %v; want the runtime's error naming it", name, k+1, c, err)
			}
			if a, e, s := f.live(); a+e+s != 0 || f.contexts() != 0 || ffi.LiveAllocations() != heap {
				t.Errorf("%s failing at call %d of %d: live allocations %d, events %d, streams %d, contexts %d, C heap %+d",
					name, k+1, c, a, e, s, f.contexts(), ffi.LiveAllocations()-heap)
			}
		}
	}
}

// dayOfWork probes a backend on the library at path and, on each kind of
// memory of GPU 1, allocates, copies there and back on a stream of its own,
// records and waits for an event (on the host and on a stream), waits for
// a stream's handle, reads the memory info, and gives everything back. It
// returns the first error; a release that fails is tried once more.
func dayOfWork(rt Runtime, path string) (err error) {
	keep := func(e error) {
		if err == nil {
			err = e
		}
	}
	release := func(what string, close func() error) {
		if e := close(); e != nil {
			keep(e)
			if e := close(); e != nil {
				keep(fmt.Errorf("%s: second try: %w", what, e))
			}
		}
	}
	b := rt.backend(path)
	info, err := b.Probe(context.Background())
	if err != nil {
		return err
	}
	defer release("Backend.Close", b.Close)
	nk := len(rt.Table.Kinds)
	for _, dd := range info.Devices[nk:] {
		d := dd.(Device)
		p, err := d.Alloc(64)
		if err != nil {
			return err
		}
		defer release("Free", func() error { return d.Free(p) })
		s, err := d.NewStream()
		if err != nil {
			return err
		}
		defer release("Stream.Close", s.Close)
		ev, err := d.NewEvent()
		if err != nil {
			return err
		}
		defer release("Event.Close", ev.Close)
		src, dst := Pattern(64, 5), make([]byte, 64)
		for _, step := range []func() error{
			func() error { return d.CopyToDevice(p, 0, src, s) },
			func() error { return ev.Record(s) },
			func() error { return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), nil) },
			func() error { return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), s) },
			func() error { return d.CopyToHost(dst, p, 0, s) },
			func() error { return d.WaitForStream(s.Handle(), nil) },
			func() error { _, _, err := d.MemoryInfo(); return err },
		} {
			if err := step(); err != nil {
				return err
			}
		}
	}
	return nil
}
