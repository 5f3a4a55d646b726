package cdevice_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Two real runtimes in one process: HIP (chipStar, itself a HIP on OpenCL)
// and OpenCL (PoCL), both loaded, sharing one libOpenCL. Record batches move
// between rocm:0 and opencl:0 through the host (the library's only way
// between two runtimes: DeviceRecordBatch.ToHost, then
// CopyRecordBatchToDevice), and on each device they are exported as an
// ArrowDeviceArray and imported again; every import must wait on the
// producer's sync_event through the device's WaitSyncEvent.

// twoRuntimes returns rocm:0 (HIP) and the first OpenCL device, or skips
// saying which is missing (fails where CI provides them).
func twoRuntimes(tb testing.TB) (rocm, cl device.Device) {
	tb.Helper()
	return testsupport.BackendDevice(tb, "hip"), testsupport.BackendDevice(tb, "opencl")
}

// waitRecorder stands in the device registry for a device (same type and
// id, so imports find it) and records the sync_events that imports make the
// host wait on.
type waitRecorder struct {
	device.Device
	mu     sync.Mutex
	waited map[uintptr]int
}

func (d *waitRecorder) WaitSyncEvent(ctx context.Context, ev uintptr, s device.Stream) error {
	if ev != 0 {
		d.mu.Lock()
		d.waited[ev]++
		d.mu.Unlock()
	}
	return d.Device.WaitSyncEvent(ctx, ev, s)
}

// tookWait reports whether ev was waited on, and takes that wait off the
// record: one import, one wait. (An event's address may be reused as soon
// as its array is released, which an import into host memory may do before
// it returns: another goroutine's event at the same address then adds its
// own wait.)
func (d *waitRecorder) tookWait(ev uintptr) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.waited[ev]
	if n <= 1 {
		delete(d.waited, ev)
	} else {
		d.waited[ev] = n - 1
	}
	return n > 0
}

// unclaimed counts the waits no import's check took: waits beyond one an
// import, or on an event no check asked about.
func (d *waitRecorder) unclaimed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.waited {
		n += c
	}
	return n
}

// twoRT is the pair of devices, each behind its waitRecorder.
type twoRT struct {
	rocm, cl *waitRecorder
}

// installRecorders registers a waitRecorder for each device, and the real
// devices again when the test ends.
func installRecorders(tb testing.TB, rocm, cl device.Device) *twoRT {
	r := &twoRT{
		rocm: &waitRecorder{Device: rocm, waited: map[uintptr]int{}},
		cl:   &waitRecorder{Device: cl, waited: map[uintptr]int{}},
	}
	for _, d := range []device.Device{rocm, cl} {
		if got, err := device.Lookup(d.Type(), d.ID()); err != nil || got != d {
			tb.Fatalf("Lookup(%s, %d) = %v, %v; want the probed device", d.Type(), d.ID(), got, err)
		}
	}
	device.Register(r.rocm)
	device.Register(r.cl)
	tb.Cleanup(func() {
		device.Register(rocm)
		device.Register(cl)
		if tb.Failed() {
			return // a failed trip may have left its wait unchecked
		}
		for _, w := range []*waitRecorder{r.rocm, r.cl} {
			if n := w.unclaimed(); n != 0 {
				tb.Errorf("%s: %d waits on sync_events beyond one an import", devName(w), n)
			}
		}
	})
	return r
}

// devName names d by type and id (chipStar's rocm:0 and PoCL's opencl:0
// have the same name, the CPU's).
func devName(d device.Device) string { return fmt.Sprintf("%s:%d", d.Type(), d.ID()) }

func (r *twoRT) recorder(d device.Device) *waitRecorder {
	if d.Type() == r.rocm.Type() {
		return r.rocm
	}
	return r.cl
}

// trip takes rec from the host to first, exports and imports it there,
// moves it to second, exports and imports it there, moves it back to first
// and exports it once more, to import it into host memory
// (ImportDeviceRecordBatch, fully validated). events counts the sync_events
// that imports waited on.
func (r *twoRT) trip(ctx context.Context, rec arrow.RecordBatch, first, second device.Device) (host arrow.RecordBatch, events int, err error) {
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, first)
	if err != nil {
		return nil, 0, fmt.Errorf("copy to %s: %w", devName(first), err)
	}
	for _, step := range []device.Device{second, first} {
		from := db.Device()
		if db, err = r.exportImport(ctx, db, from); err != nil {
			return nil, events, err
		}
		events++
		if db, err = moveBatch(ctx, db, step); err != nil {
			return nil, events, fmt.Errorf("move %s → %s: %w", devName(from), devName(step), err)
		}
	}
	host, err = r.exportToHost(ctx, db, first)
	if err != nil {
		return nil, events, err
	}
	return host, events + 1, nil
}

// exportStructs are a DeviceArray and Schema on the C heap, released (if a
// failure left them live) and freed by done.
type exportStructs struct {
	arr *abi.DeviceArray
	sch *abi.Schema
}

func newExportStructs() exportStructs {
	return exportStructs{cdevice.New[abi.DeviceArray](), cdevice.New[abi.Schema]()}
}

func (s exportStructs) done() {
	cdevice.ReleaseDeviceArray(s.arr)
	cdevice.ReleaseSchema(s.sch)
	cdevice.Free(s.arr)
	cdevice.Free(s.sch)
}

// exportChecked exports db (taking the caller's reference) and checks that the
// struct names dev and carries a sync_event; it returns that event.
func exportChecked(db *cdevice.DeviceRecordBatch, dev device.Device, s exportStructs) (uintptr, error) {
	err := db.Export(s.arr, s.sch)
	db.Release() // the export holds its own reference
	if err != nil {
		return 0, fmt.Errorf("export on %s: %w", devName(dev), err)
	}
	if s.arr.DeviceType != dev.Type() || s.arr.DeviceID != dev.ID() {
		return 0, fmt.Errorf("export on %s: the ArrowDeviceArray says %s:%d", devName(dev), s.arr.DeviceType, s.arr.DeviceID)
	}
	if s.arr.SyncEvent == 0 {
		return 0, fmt.Errorf("export on %s: no sync_event", devName(dev))
	}
	return s.arr.SyncEvent, nil
}

// exportImport exports db from dev and imports it on dev again; the import
// must have waited on the export's sync_event.
func (r *twoRT) exportImport(ctx context.Context, db *cdevice.DeviceRecordBatch, dev device.Device) (*cdevice.DeviceRecordBatch, error) {
	s := newExportStructs()
	defer s.done()
	ev, err := exportChecked(db, dev, s)
	if err != nil {
		return nil, err
	}
	got, err := cdevice.ImportDeviceRecordBatchOnDevice(ctx, s.arr, s.sch)
	if err != nil {
		return nil, fmt.Errorf("import on %s: %w", devName(dev), err)
	}
	rec := r.recorder(dev)
	if got.Device() != device.Device(rec) {
		got.Release()
		return nil, fmt.Errorf("import on %s: the batch is on %v, not on the registered %s", devName(dev), got.Device(), devName(dev))
	}
	if !rec.tookWait(ev) {
		got.Release()
		return nil, fmt.Errorf("import on %s: it never waited on the producer's sync_event %#x", devName(dev), ev)
	}
	return got, nil
}

// exportToHost exports db from dev and imports it into host memory with
// ImportDeviceRecordBatch, which must wait on the sync_event too.
func (r *twoRT) exportToHost(ctx context.Context, db *cdevice.DeviceRecordBatch, dev device.Device) (arrow.RecordBatch, error) {
	s := newExportStructs()
	defer s.done()
	ev, err := exportChecked(db, dev, s)
	if err != nil {
		return nil, err
	}
	host, err := cdevice.ImportDeviceRecordBatch(ctx, s.arr, s.sch, cdevice.WithFullValidation())
	if err != nil {
		return nil, fmt.Errorf("import from %s into host memory: %w", devName(dev), err)
	}
	if !r.recorder(dev).tookWait(ev) {
		host.Release()
		return nil, fmt.Errorf("import from %s into host memory: it never waited on the producer's sync_event %#x", devName(dev), ev)
	}
	return host, nil
}

// moveBatch copies db to dst through host memory, releasing db.
func moveBatch(ctx context.Context, db *cdevice.DeviceRecordBatch, dst device.Device) (*cdevice.DeviceRecordBatch, error) {
	host, err := db.ToHost(ctx)
	db.Release()
	if err != nil {
		return nil, err
	}
	defer host.Release()
	return cdevice.CopyRecordBatchToDevice(ctx, host, dst)
}

// batchDiff says how got differs from want ("" when equal).
func batchDiff(want, got arrow.RecordBatch) string {
	var d []string
	d = append(d, schemaDiffs(want.Schema(), got.Schema())...)
	if !array.RecordEqual(want, got) {
		d = append(d, fmt.Sprintf("values differ:\nwant %v\ngot  %v", want, got))
	}
	return strings.Join(d, "; ")
}

// held is what LiveLeaks counts that a finished round trip must give back
// (the C heap is left out: OffHeap structs stay until their test's cleanup).
type held struct {
	exports, imports, deviceArrays, deviceAllocs int64
	handles                                      int
	panics, doubleReleases                       int64
}

func heldNow() held {
	l := cdevice.LiveLeaks()
	return held{l.Exports(), l.Imports(), l.DeviceArrays, l.DeviceAllocs, l.Handles, l.CallbackPanics, l.DoubleReleases}
}

// wantNothingHeld fails tb unless heldNow returns to before, letting
// finalizers of dropped arrow-go values run first.
func wantNothingHeld(tb testing.TB, before held) {
	tb.Helper()
	var now held
	if settle.Eventually(func() bool { now = heldNow(); return now == before }) {
		return
	}
	tb.Errorf("still held after the round trips: %+v, before them %+v (%s)", now, before, cdevice.LiveLeaks())
}

// directions are both orders of the two devices.
func directions(rocm, cl device.Device) [][2]device.Device {
	return [][2]device.Device{{rocm, cl}, {cl, rocm}}
}

// Every gold batch goes host → rocm:0 → opencl:0 → rocm:0 → host, exported
// and imported as an ArrowDeviceArray on every device it visits, and the
// other way round (opencl:0 first); each import waits on the producer's
// sync_event, what comes back equals the original, and nothing is held
// afterwards.
func TestTwoRuntimesGold(t *testing.T) {
	rocm, cl := twoRuntimes(t)
	r := installRecorders(t, rocm, cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	before := heldNow()
	for _, dir := range directions(rocm, cl) {
		first, second := dir[0], dir[1]
		t.Run(devName(first)+"→"+devName(second), func(t *testing.T) {
			batches, events := 0, 0
			for _, c := range goldCases(t) {
				t.Run(c, func(t *testing.T) {
					_, recs := readGold(t, c+".stream")
					for i, rec := range recs {
						host, n, err := r.trip(ctx, rec, first, second)
						events += n
						if err != nil {
							t.Fatalf("batch %d: %v", i, err)
						}
						if d := batchDiff(rec, host); d != "" {
							t.Errorf("batch %d: %s", i, d)
						}
						host.Release()
						batches++
					}
				})
			}
			t.Logf("%d gold batches, %d imports, each waited on its sync_event", batches, events)
		})
	}
	wantNothingHeld(t, before)
}

// Eight goroutines use both runtimes at once: half start on rocm:0, half on
// opencl:0, and each takes its share of the gold batches (and the wide
// sample batch) on round trips to the other device and back, three times.
func TestTwoRuntimesConcurrent(t *testing.T) {
	rocm, cl := twoRuntimes(t)
	r := installRecorders(t, rocm, cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	type job struct {
		name string
		rec  arrow.RecordBatch
	}
	wide := wideBatch(t)
	jobs := []job{{"wide", wide}}
	for _, c := range goldCases(t) {
		_, recs := readGold(t, c+".stream")
		for i, rec := range recs {
			jobs = append(jobs, job{fmt.Sprintf("%s batch %d", c, i), rec})
		}
	}
	// arrow-go's Dictionary.Dictionary() makes its array on first use,
	// unsynchronized: make it now, before the workers compare with the
	// batches they share.
	for _, j := range jobs {
		array.RecordEqual(j.rec, j.rec)
	}
	before := heldNow()
	const workers, rounds = 8, 3
	dirs := directions(rocm, cl)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	trips := map[string]int{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first, second := dirs[w%2][0], dirs[w%2][1]
			n := 0
			defer func() {
				mu.Lock()
				trips[devName(first)] += n
				mu.Unlock()
			}()
			for round := range rounds {
				// Every worker takes the wide batch and a quarter of the
				// gold batches: each gold batch goes both ways.
				for j := range jobs {
					if j != 0 && (j-1)%(workers/2) != w/2 {
						continue
					}
					host, _, err := r.trip(ctx, jobs[j].rec, first, second)
					if err != nil {
						errs <- fmt.Errorf("worker %d (%s first), round %d, %s: %w", w, devName(first), round, jobs[j].name, err)
						return
					}
					d := batchDiff(jobs[j].rec, host)
					host.Release()
					if d != "" {
						errs <- fmt.Errorf("worker %d (%s first), round %d, %s: %s", w, devName(first), round, jobs[j].name, d)
						return
					}
					n++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("round trips by first device: %v", trips)
	wantNothingHeld(t, before)
}

// After round trips on both runtimes, with nothing held and the memory
// cache trimmed, HIP's backend closes cleanly (its default stream goes back
// to chipStar; a second Close does nothing), and OpenCL, whose library
// chipStar shares, still works. Closing is for good (a backend probes once per
// process), so this runs in a child process of its own; the child's
// TestMain ends with the binary's leak check. The OpenCL backend has no
// Close: the library keeps its context for the life of the process.
func TestTwoRuntimesClose(t *testing.T) {
	const child = "CDEVICE_TWO_RUNTIMES_CLOSE_CHILD"
	rocm, cl := twoRuntimes(t)
	if os.Getenv(child) != "1" {
		cmd := selfexec.Command([]string{child + "=1"}, "-test.run=^TestTwoRuntimesClose$", "-test.v", "-test.count=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestTwoRuntimesClose") {
			t.Fatalf("the child did not pass:\n%s", out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "tworuntimes_test.go") {
				t.Log("child:", strings.TrimSpace(l))
			}
		}
		return
	}

	r := installRecorders(t, rocm, cl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := heldNow()
	rec := wideBatch(t)
	for _, dir := range directions(rocm, cl) {
		host, _, err := r.trip(ctx, rec, dir[0], dir[1])
		if err != nil {
			t.Fatal(err)
		}
		if d := batchDiff(rec, host); d != "" {
			t.Error(d)
		}
		host.Release()
	}
	wantNothingHeld(t, before)
	cdevice.TrimMemoryCache() // the cache's blocks of rocm:0 go back before it closes
	if n := cdevice.CachedMemory(rocm); n != 0 {
		t.Errorf("%d bytes of rocm:0 still cached after TrimMemoryCache", n)
	}

	closer, ok := hip.Backend.(interface{ Close() error })
	if !ok {
		t.Fatalf("hip.Backend (%T) has no Close", hip.Backend)
	}
	if err := closer.Close(); err != nil {
		t.Fatalf("closing HIP: %v", err)
	}
	t.Logf("HIP backend closed")
	if err := closer.Close(); err != nil {
		t.Errorf("closing HIP again: %v", err)
	}

	// HIP's devices are used up: every call is refused, none reaches
	// chipStar (whose stream the default one was).
	if _, err := rocm.Alloc(64); !errors.Is(err, device.ErrReleased) {
		t.Errorf("rocm:0 Alloc after HIP closed: %v; want ErrReleased", err)
	}
	if _, err := cdevice.CopyRecordBatchToDevice(ctx, rec, rocm); !errors.Is(err, device.ErrReleased) {
		t.Errorf("a copy to rocm:0 after HIP closed: %v; want ErrReleased", err)
	}

	// OpenCL goes on: host → opencl:0, exported and imported, → host.
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, cl)
	if err != nil {
		t.Fatalf("opencl after HIP closed: %v", err)
	}
	if db, err = r.exportImport(ctx, db, cl); err != nil {
		t.Fatalf("opencl after HIP closed: %v", err)
	}
	host, err := db.ToHost(ctx)
	db.Release()
	if err != nil {
		t.Fatalf("opencl after HIP closed: %v", err)
	}
	if d := batchDiff(rec, host); d != "" {
		t.Errorf("opencl after HIP closed: %s", d)
	}
	host.Release()
	wantNothingHeld(t, before)
	t.Logf("OpenCL round trip after HIP closed: ok; nothing held")
}
