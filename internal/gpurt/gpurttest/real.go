package gpurttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// Tests on the runtime rt.Real finds (a real one, or whatever the
// table's EnvLibrary names); they skip where there is no runtime or no
// device: go test ./device/cuda -run Real on a GPU machine.

// scaled is n, or short under go test -short: the sizes and counts of the
// Real tests are a GPU's, too much for the doubles under the race detector
// (TestDoubleStandsInForGPU runs them short).
func scaled(n, short int) int {
	if testing.Short() {
		return short
	}
	return n
}

// copySize is the size of the copies the benchmarks time: 64 MiB (1 MiB
// under -short).
func copySize() int { return scaled(64<<20, 1<<20) }

// RealDevices probes rt.Real and returns its devices, or skips.
func RealDevices(t testing.TB, rt Runtime) []Device {
	t.Helper()
	info, err := rt.Real.Probe(context.Background())
	switch {
	case errors.Is(err, device.ErrNotFound), errors.Is(err, device.ErrNoDevice):
		t.Skipf("no %s: %v", rt.Table.Title, err)
	case err != nil && strings.Contains(err.Error(), "driver too old"):
		t.Skipf("%s unusable here: %v", rt.Table.Title, err)
	case err != nil:
		t.Fatal(err)
	}
	var ds []Device
	for _, d := range info.Devices {
		ds = append(ds, d.(Device))
	}
	return ds
}

var realTests = []test{
	{"Probe", testRealProbe},
	{"Copies", testRealCopies},
	{"Events", testRealEvents},
	{"Errors", testRealErrors},
	{"Concurrent", testRealConcurrent},
}

func testRealProbe(t *testing.T, rt Runtime) {
	ds := RealDevices(t, rt)
	info, _ := rt.Real.Probe(context.Background())
	t.Logf("%s: %s", info.Library, info.Version)
	prefix := "runtime "
	if rt.driver() {
		prefix = "driver API "
	}
	if !strings.HasPrefix(info.Version, prefix) || len(ds)%len(rt.Table.Kinds) != 0 {
		t.Errorf("version %q, %d devices", info.Version, len(ds))
	}
	for _, d := range ds {
		free, total, err := d.MemoryInfo()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: %q, %d of %d MiB free", d, d.Name(), free>>20, total>>20)
		if d.Name() == "" {
			t.Errorf("%v: no name", d)
		}
		if d.Type() != rt.Table.Kinds[rt.kind(gpurt.HostMemory)].Type && (total <= 0 || free <= 0 || free > total) {
			t.Errorf("%v: MemoryInfo %d / %d", d, free, total)
		}
		if got, err := device.Lookup(d.Type(), d.ID()); err != nil || got != device.Device(d) {
			t.Errorf("%v not registered: %v", d, err)
		}
	}
}

// Copies both ways and on the device, at offsets, on a stream and on the
// default stream, for every kind of memory of every device.
func testRealCopies(t *testing.T, rt Runtime) {
	const n = 4 << 20
	src := Pattern(n, 11)
	for _, d := range RealDevices(t, rt) {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			a, err := d.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(a)
			b, err := d.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(b)
			for _, s := range []device.Stream{nil, mustStream(t, d)} {
				if err := d.CopyToDevice(a, 0, src[:n/2], s); err != nil {
					t.Fatal(err)
				}
				if err := d.CopyToDevice(a, n/2, src[n/2:], s); err != nil {
					t.Fatal(err)
				}
				if err := d.CopyOnDevice(b, 100, a, 1000, n/2, s); err != nil {
					t.Fatal(err)
				}
				dst, whole := make([]byte, n/2), make([]byte, n)
				if err := d.CopyToHost(dst, b, 100, s); err != nil {
					t.Fatal(err)
				}
				if err := d.CopyToHost(whole, a, 0, s); err != nil {
					t.Fatal(err)
				}
				waitFor(t, d, s)
				if !bytes.Equal(dst, src[1000:1000+n/2]) || !bytes.Equal(whole, src) {
					t.Fatalf("stream %v: data differs", s)
				}
				if d.HostAccessible() && !bytes.Equal(HostBytes(a, n), src) {
					t.Fatal("host view of the memory differs")
				}
				if s != nil {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

func mustStream(t testing.TB, d device.Device) device.Stream {
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFor waits for s, or for the default stream through an event.
func waitFor(t *testing.T, d device.Device, s device.Stream) {
	t.Helper()
	if s != nil {
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if err := ev.Record(nil); err != nil {
		t.Fatal(err)
	}
	if err := ev.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

// A second stream reads what the first wrote, ordered only by the sync
// event, or by the streams named by their handles (device.ForeignStreams);
// or the host waits.
func testRealEvents(t *testing.T, rt Runtime) {
	d := RealDevices(t, rt)[0]
	fs := d.(device.ForeignStreams)
	n := scaled(64<<20, 1<<20) // big enough that the copy is still running when s2 queues its read
	buf, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	s1, s2 := mustStream(t, d), mustStream(t, d)
	defer s1.Close()
	defer s2.Close()
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for i, w := range []struct {
		name string
		wait func() error
	}{
		{"s2 waits for the event", func() error { return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), s2) }},
		{"the host waits for the event", func() error { return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), nil) }},
		{"s2 waits for s1's handle", func() error { return fs.WaitForStream(s1.Handle(), s2) }},
		{"the host waits for s1's handle", func() error { return fs.WaitForStream(s1.Handle(), nil) }},
		{"s2's handle waits for the event", func() error { return fs.MakeStreamWait(s2.Handle(), ev.SyncEvent()) }},
	} {
		src, dst := Pattern(n, byte(i)), make([]byte, n)
		if err := d.CopyToDevice(buf, 0, src, s1); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(s1); err != nil {
			t.Fatal(err)
		}
		if err := w.wait(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if err := d.CopyToHost(dst, buf, 0, s2); err != nil {
			t.Fatal(err)
		}
		if err := s2.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src) {
			t.Fatalf("%s: s2 read before s1's write finished", w.name)
		}
	}
}

func testRealErrors(t *testing.T, rt Runtime) {
	d := RealDevices(t, rt)[0]
	k := rt.Table.Kinds[0]
	_, err := d.Alloc(int(min(uint64(1)<<50, uint64(math.MaxInt))))
	var re *device.RuntimeError
	if !errors.As(err, &re) || re.Call != k.Alloc || re.Code != 2 || re.Message == "" {
		t.Errorf("Alloc(huge): %v", err)
	}
	if d.ErrorName(2) == "" {
		t.Error("ErrorName(2) is empty")
	}
	// A pointer the runtime never gave out.
	err = d.Free(device.Pointer(0x1000))
	if !errors.As(err, &re) || re.Call != k.Free || re.Message == "" {
		t.Errorf("Free(bogus): %v", err)
	}
	t.Logf("errors: %v", err)
	// The device still works after those errors.
	if err := RoundTrip(d, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
}

func testRealConcurrent(t *testing.T, rt Runtime) {
	ds := RealDevices(t, rt)
	var wg sync.WaitGroup
	goroutines, rounds := scaled(32, 8), scaled(20, 3)
	errs := make(chan error, goroutines)
	for g := range goroutines {
		d := ds[g%len(ds)]
		wg.Go(func() {
			for i := range rounds {
				if err := RoundTrip(d, 1<<20, byte(g+i)); err != nil {
					errs <- fmt.Errorf("%v: %w", d, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkCopy measures copySize copies to the first real device (toDevice)
// or back, each waited for.
func BenchmarkCopy(b *testing.B, rt Runtime, toDevice bool) {
	d := RealDevices(b, rt)[0]
	n := copySize()
	p, err := d.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(p)
	s := mustStream(b, d)
	defer s.Close()
	host := Pattern(n, 1)
	copy := func() error { return d.CopyToHost(host, p, 0, s) }
	if toDevice {
		copy = func() error { return d.CopyToDevice(p, 0, host, s) }
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		if err := copy(); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}
