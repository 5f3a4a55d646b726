package gpurttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
	"github.com/purearrow/cdevice/internal/testkit/importtest"
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
	{"DeviceImports", testRealImports},
}

// testRealImports imports a C producer's batches on each of rt's devices
// (importtest): one wait for device memory an import, none for memory the
// host reads.
func testRealImports(t *testing.T, rt Runtime) {
	for _, d := range RealDevices(t, rt) {
		t.Run(d.Name(), func(t *testing.T) { importtest.DeviceImports(t, d) })
	}
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
		// Registered by this probe, or by a later probe of the same GPU
		// through another API (the Real tests probe both in one process).
		if got, err := device.Lookup(d.Type(), d.ID()); err != nil || fmt.Sprint(got) != fmt.Sprint(d) {
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
	// A wait that can be cancelled polls. An event never recorded has
	// nothing to wait for, however the runtime answers a query on it (see
	// testUnrecordedEvent); a poll that never ends would meet the deadline.
	polled, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.WaitSyncEvent(polled, ev.SyncEvent(), nil); err != nil {
		t.Fatalf("the host polls for an event never recorded: %v", err)
	}
	for i, w := range []struct {
		name string
		wait func() error
	}{
		{"s2 waits for the event", func() error { return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), s2) }},
		{"the host waits for the event", func() error { return d.WaitSyncEvent(context.Background(), ev.SyncEvent(), nil) }},
		{"the host polls for the event", func() error { return d.WaitSyncEvent(polled, ev.SyncEvent(), nil) }},
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

// A copyCase is one row of the copy benchmarks' table.
type copyCase struct {
	toDevice bool // else to the host
	pinned   bool // page-locked host memory from the runtime, else pageable
	size     int
}

// EnvBenchSizes overrides the sizes of the copy benchmarks: a
// comma-separated list such as 16MiB,64MiB (B, KiB, MiB, GiB), for a
// runtime whose copies are too slow for a GPU's sizes (chipStar on a CPU).
const EnvBenchSizes = "CDEVICE_BENCH_SIZES"

// copySizes are the sizes of the copies the benchmarks time: 64 MiB and
// 1 GiB (1 MiB and 4 MiB under -short, for the doubles), or
// $CDEVICE_BENCH_SIZES.
func copySizes(b *testing.B) []int {
	if v := os.Getenv(EnvBenchSizes); v != "" {
		var sizes []int
		for f := range strings.SplitSeq(v, ",") {
			n, err := parseSize(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("%s=%q: %v", EnvBenchSizes, v, err)
			}
			sizes = append(sizes, n)
		}
		return sizes
	}
	if testing.Short() {
		return []int{1 << 20, 4 << 20}
	}
	return []int{64 << 20, 1 << 30}
}

// parseSize reads a positive number of bytes with an optional binary
// unit: 4096, 64KiB, 16MiB, 1GiB.
func parseSize(s string) (int, error) {
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = t, u.mult
			break
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > math.MaxInt/mult {
		return 0, fmt.Errorf("%q is not a size such as 16MiB", s)
	}
	return n * mult, nil
}

// sizeName is n as a benchmark names it: 64MiB, 1GiB, 8KiB, 100B.
func sizeName(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// memoryName names the host memory of a copy.
func memoryName(pinned bool) string {
	if pinned {
		return "pinned"
	}
	return "pageable"
}

// BenchmarkCopies is the copy table of one direction through rt: copies
// between host memory and the first real device's memory, each waited
// for, by Go through the binding and by C through the same library
// (testdata/c/copy_baseline.c), one sub-benchmark for each host memory
// (pageable: Go's heap, or malloc's in C; pinned: page-locked by the
// runtime, through its pinned host memory device in Go), size and side:
// pageable/64MiB/Go, pageable/64MiB/C, ..., pinned/1GiB/C. Each
// sub-benchmark frees its memory when it ends, so that the Go and the C
// side of a size never hold theirs at once.
func BenchmarkCopies(b *testing.B, rt Runtime, toDevice bool) {
	RealDevices(b, rt)
	for _, pinned := range []bool{false, true} {
		b.Run(memoryName(pinned), func(b *testing.B) {
			for _, n := range copySizes(b) {
				c := copyCase{toDevice: toDevice, pinned: pinned, size: n}
				b.Run(sizeName(n), func(b *testing.B) {
					b.Run("Go", func(b *testing.B) { benchmarkCopyGo(b, rt, c) })
					b.Run("C", func(b *testing.B) { benchmarkCopyC(b, rt, c) })
				})
			}
		})
	}
}

// benchmarkCopyGo times c's copies between Go's view of host memory and
// the first real device, each waited for on a stream; the copies after
// the timed ones bring the pattern back.
func benchmarkCopyGo(b *testing.B, rt Runtime, c copyCase) {
	ds := RealDevices(b, rt)
	d := ds[0]
	var host []byte
	if c.pinned {
		hd := pinnedDevice(b, rt, ds, d)
		hp, err := hd.Alloc(c.size)
		if errors.Is(err, device.ErrMissingSymbol) {
			b.Skip(err)
		}
		if err != nil {
			b.Fatal(err)
		}
		defer checkFree(b, hd, hp)
		host = HostBytes(hp, c.size)
	} else {
		host = make([]byte, c.size)
		// Give the pages back to the system before the C side runs.
		defer debug.FreeOSMemory()
	}
	p, err := d.Alloc(c.size)
	if err != nil {
		b.Fatal(err)
	}
	defer checkFree(b, d, p)
	s := mustStream(b, d)
	defer s.Close()
	const seed = 1
	fill(host, seed)
	wait := func(err error) {
		b.Helper()
		if err == nil {
			err = s.Synchronize()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	// One copy before the timed ones, as the C side's check makes one: the
	// device memory's pages are touched (where device memory is the host's,
	// chipStar's on a CPU, the first copy into fresh memory faults them in),
	// and copies to the host bring it back.
	wait(d.CopyToDevice(p, 0, host, s))
	timed := func() error { return d.CopyToHost(host, p, 0, s) }
	if c.toDevice {
		timed = func() error { return d.CopyToDevice(p, 0, host, s) }
	} else {
		clear(host)
	}
	b.SetBytes(int64(c.size))
	for b.Loop() {
		wait(timed())
	}
	if c.toDevice {
		clear(host)
		wait(d.CopyToHost(host, p, 0, s))
	}
	if i := differs(host, seed); i >= 0 {
		b.Fatalf("byte %d of %d differs after the copies", i, c.size)
	}
}

// pinnedDevice is the device of rt's pinned host memory on d's GPU.
func pinnedDevice(b *testing.B, rt Runtime, ds []Device, d Device) Device {
	b.Helper()
	k := rt.kind(gpurt.HostMemory)
	if k < 0 {
		b.Skipf("%s has no pinned host memory", rt.Table.Title)
	}
	for _, h := range ds {
		if h.Type() == rt.Table.Kinds[k].Type && h.Ordinal() == d.Ordinal() {
			if !h.HostAccessible() {
				b.Fatalf("%v: pinned host memory is not host-accessible", h)
			}
			return h
		}
	}
	b.Fatalf("%s lists no pinned host memory of %v", rt.Table.Title, d)
	return nil
}

// checkFree frees p, an error failing b.
func checkFree(b *testing.B, d device.Device, p device.Pointer) {
	if err := d.Free(p); err != nil {
		b.Error(err)
	}
}

// fill writes Pattern's bytes into p; they repeat every 256 bytes, so past
// the first 256 fill copies what it wrote.
func fill(p []byte, seed byte) {
	for i := range min(len(p), 256) {
		p[i] = seed + byte(i*7)
	}
	for k := 256; k < len(p); k *= 2 {
		copy(p[k:], p[:k])
	}
}

// differs is the index of the first byte of p that is not
// Pattern(len(p), seed)'s, or -1.
func differs(p []byte, seed byte) int {
	head := Pattern(min(len(p), 256), seed)
	if bytes.Equal(p[:len(head)], head) && bytes.Equal(p[len(head):], p[:len(p)-len(head)]) {
		return -1
	}
	for i := range p {
		if p[i] != head[i%len(head)] {
			return i
		}
	}
	return -1
}

// BenchmarkSmallReads is the device stream's table: per batch of a device
// stream of arrays with variable-length types, what the importer does to
// size them (cdevice's deviceTree.fetch, and nanoarrow's
// ArrowDeviceArrayViewSetArray): reads reads offsets of width bytes back
// from the first real device once the batch's sync event is done. Go does
// it through the binding as the importer does (ReadValues: the device waits
// for the event, one batched copy or a copy a value into page-locked
// staging, one synchronization), C (testdata/c/copy_baseline.c's
// copy_baseline_reads) with plain calls through the same library (the
// stream waits for the event, a copy a value into the library's pinned
// memory, one synchronization): Go/C, in ns per batch and batches/s. The
// event is recorded once and waited for in every batch, as for a producer
// that sends one device batch again and again (the cdevice bench
// command's).
func BenchmarkSmallReads(b *testing.B, rt Runtime, reads, width int) {
	RealDevices(b, rt)
	b.Run("Go", func(b *testing.B) { benchmarkReadsGo(b, rt, reads, width) })
	b.Run("C", func(b *testing.B) { benchmarkReadsC(b, rt, reads, width) })
}

// readsSize is the device memory the reads are spread over.
const readsSize = 1 << 20

// readsStride is how far apart the reads are: as copy_baseline_reads
// spreads them.
func readsStride(reads int) int { return readsSize / reads / 8 * 8 }

func benchmarkReadsGo(b *testing.B, rt Runtime, reads, width int) {
	d := RealDevices(b, rt)[0]
	p, err := d.Alloc(readsSize)
	if err != nil {
		b.Fatal(err)
	}
	defer checkFree(b, d, p)
	const seed = 1
	src := make([]byte, readsSize)
	fill(src, seed)
	s := mustStream(b, d)
	defer s.Close()
	ev, err := d.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer ev.Close()
	if err := d.CopyToDevice(p, 0, src, s); err != nil {
		b.Fatal(err)
	}
	if err := ev.Record(s); err != nil {
		b.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	ctx, stride := context.Background(), readsStride(reads)
	values := make([]device.ValueRead, reads)
	batch := func() error {
		for i := range values {
			values[i] = device.ValueRead{Ptr: p, Off: int64(i * stride), Width: width}
		}
		return d.(device.ValueReader).ReadValues(ctx, []uintptr{ev.SyncEvent()}, values)
	}
	for b.Loop() {
		if err := batch(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
	for i, v := range values {
		want := make([]byte, 8)
		copy(want, src[i*stride:i*stride+width])
		r := device.ValueRead{Width: width}
		r.Set(want)
		if v.Value != r.Value {
			b.Fatalf("read %d: %d, want %d", i, v.Value, r.Value)
		}
	}
}

func benchmarkReadsC(b *testing.B, rt Runtime, reads, width int) {
	RealDevices(b, rt)
	info, _ := rt.Real.Probe(b.Context())
	bl := openBaseline(b, rt, info.Library, true, readsSize) // pinned: the reads land in page-locked memory
	defer bl.close()
	b.ResetTimer()
	bl.reads(reads, width, b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
}
