package cuda_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
)

// Tests named Real use the library cuda.Backend finds (a real libcudart, or
// whatever $CDEVICE_CUDA_LIBRARY names) and skip when there is no runtime
// or no device: go test ./device/cuda -run Real on a GPU machine.

func realDevices(t testing.TB) []*cuda.Device {
	t.Helper()
	info, err := cuda.Backend.Probe(context.Background())
	switch {
	case errors.Is(err, device.ErrNotFound), errors.Is(err, device.ErrNoDevice):
		t.Skipf("no CUDA: %v", err)
	case err != nil && strings.Contains(err.Error(), "driver too old"):
		t.Skipf("CUDA unusable here: %v", err)
	case err != nil:
		t.Fatal(err)
	}
	var ds []*cuda.Device
	for _, d := range info.Devices {
		ds = append(ds, d.(*cuda.Device))
	}
	return ds
}

func TestRealProbe(t *testing.T) {
	ds := realDevices(t)
	info, _ := cuda.Backend.Probe(context.Background())
	t.Logf("%s: %s", info.Library, info.Version)
	if !strings.HasPrefix(info.Version, "runtime ") || len(ds)%3 != 0 {
		t.Errorf("version %q, %d devices", info.Version, len(ds))
	}
	for _, d := range ds {
		maj, min := d.ComputeCapability()
		free, total, err := d.MemoryInfo()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: %q sm_%d%d, %d of %d MiB free", d, d.Name(), maj, min, free>>20, total>>20)
		if d.Name() == "" || maj < 3 {
			t.Errorf("%v: name %q, compute capability %d.%d", d, d.Name(), maj, min)
		}
		if d.Kind() != abi.DeviceCUDAHost && (total <= 0 || free <= 0 || free > total) {
			t.Errorf("%v: MemoryInfo %d / %d", d, free, total)
		}
		if got, err := device.Lookup(d.Type(), d.ID()); err != nil || got != device.Device(d) {
			t.Errorf("%v not registered: %v", d, err)
		}
	}
}

// Copies both ways and on the device, at offsets, on a stream and on the
// default stream, for every kind of memory of every device.
func TestRealCopies(t *testing.T) {
	const n = 4 << 20
	src := pattern(n, 11)
	for _, d := range realDevices(t) {
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
				if d.HostAccessible() && !bytes.Equal(hostBytes(a, n), src) {
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

func mustStream(t *testing.T, d *cuda.Device) device.Stream {
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFor waits for s, or for the default stream through an event.
func waitFor(t *testing.T, d *cuda.Device, s device.Stream) {
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
// event; then the host waits on it.
func TestRealEvents(t *testing.T) {
	d := realDevices(t)[0]
	const n = 64 << 20 // big enough that the copy is still running when s2 queues its read
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
	for i := range 3 {
		src, dst := pattern(n, byte(i)), make([]byte, n)
		if err := d.CopyToDevice(buf, 0, src, s1); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(s1); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			// The host waits, then reads on s2 with no event.
			if err := d.WaitSyncEvent(ev.SyncEvent(), nil); err != nil {
				t.Fatal(err)
			}
		} else if err := d.WaitSyncEvent(ev.SyncEvent(), s2); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyToHost(dst, buf, 0, s2); err != nil {
			t.Fatal(err)
		}
		if err := s2.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src) {
			t.Fatalf("round %d: s2 read before s1's write finished", i)
		}
	}
}

func TestRealErrors(t *testing.T) {
	d := realDevices(t)[0]
	_, err := d.Alloc(int(min(uint64(1)<<50, uint64(math.MaxInt))))
	var re *device.RuntimeError
	if !errors.As(err, &re) || re.Call != "cudaMalloc" || re.Code != 2 || re.Message == "" {
		t.Errorf("Alloc(huge): %v", err)
	}
	if name := d.ErrorName(2); name != "cudaErrorMemoryAllocation" {
		t.Errorf("ErrorName(2) = %q", name)
	}
	// A pointer the runtime never gave out.
	err = d.Free(device.Pointer(0x1000))
	if !errors.As(err, &re) || re.Call != "cudaFree" || re.Message == "" {
		t.Errorf("Free(bogus): %v", err)
	}
	t.Logf("errors: %v", err)
	// The device still works after those errors.
	if err := roundTrip(d, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
}

func TestRealConcurrent(t *testing.T) {
	ds := realDevices(t)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		d := ds[g%len(ds)]
		wg.Go(func() {
			for i := range 20 {
				if err := roundTrip(d, 1<<20, byte(g+i)); err != nil {
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

func BenchmarkRealCopyToDevice(b *testing.B) {
	d := realDevices(b)[0]
	const n = 64 << 20
	p, err := d.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(p)
	s, _ := d.NewStream()
	defer s.Close()
	src := pattern(n, 1)
	b.SetBytes(n)
	for b.Loop() {
		if err := d.CopyToDevice(p, 0, src, s); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRealToHost(b *testing.B) {
	d := realDevices(b)[0]
	const n = 64 << 20
	p, err := d.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(p)
	s, _ := d.NewStream()
	defer s.Close()
	dst := make([]byte, n)
	b.SetBytes(n)
	for b.Loop() {
		if err := d.CopyToHost(dst, p, 0, s); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}
