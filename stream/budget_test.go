package stream_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	_ "github.com/purearrow/cdevice/device/cuda"
	_ "github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt/gpurttest"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/selfexec"
	"github.com/purearrow/cdevice/stream"
)

// What importing one batch of a C producer's device stream may cost, where
// the runtime's costs are counted (the CUDA and HIP test doubles), held per
// import over budgetImports imports of the bench's wide batch and of a
// nested one: one round trip to the device, no copy into pageable memory,
// no stream or event made, one device switch, and at most budgetCalls
// runtime calls plus one a value read (budgetCalls in all where the
// runtime has a batched copy).
const (
	budgetImports = 100
	budgetCalls   = 4
)

// budgetEnv marks the child process of TestDeviceStreamCallBudget; its
// value names the backend the child measures.
const budgetEnv = "CDEVICE_BUDGET_BACKEND"

// A budgetBackend is one runtime the budget is held on, in a process of
// its own (a backend probes once a process).
type budgetBackend struct {
	name    string
	backend string // its registered name
	typ     abi.DeviceType
	library string                          // the double to measure ("": a real runtime, measured for growth only)
	env     func(t *testing.T) []string     // the child's environment
	setup   func(t *testing.T, path string) // in the child, before the probe
}

var budgetBackends = []budgetBackend{
	{name: "cuda runtime double", backend: "cuda", typ: abi.DeviceCUDA, library: "fakecudart",
		env: func(t *testing.T) []string {
			return []string{"CDEVICE_CUDA_API=runtime", "CDEVICE_CUDA_LIBRARY=" + ctest.Path(t, "fakecudart")}
		}},
	{name: "cuda driver API double", backend: "cuda", typ: abi.DeviceCUDA, library: "fakecuda_mixed",
		env: func(t *testing.T) []string {
			return []string{"CDEVICE_CUDA_API=driver", "CDEVICE_CUDA_DRIVER_LIBRARY=" + ctest.Path(t, "fakecuda_mixed")}
		}},
	{name: "hip double", backend: "hip", typ: abi.DeviceROCm, library: "fakehip",
		env: func(t *testing.T) []string { return []string{"CDEVICE_HIP_LIBRARY=" + ctest.Path(t, "fakehip")} }},
	// chipStar has no batched copy; its double stands for it on a GPU
	// (an OpenCL device of type GPU), whose memory the host cannot read.
	{name: "chipStar double", backend: "hip", typ: abi.DeviceROCm, library: "fakehip_chipstar",
		env: func(t *testing.T) []string {
			return []string{"CDEVICE_HIP_LIBRARY=" + ctest.Path(t, "fakehip_chipstar")}
		},
		setup: func(t *testing.T, path string) {
			lib, err := ffi.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			ffi.Call(must(lib.Symbol("fake_chipstar_set_device")), 4, 0) // CL_DEVICE_TYPE_GPU
		}},
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestDeviceStreamCallBudget holds the budget above on each double, each
// in a child process whose CUDA or HIP backend is that double. Where the
// machine has a real runtime configured (chipStar in CI's HIP leg), the
// same imports run on it, checked for their values and for no growth of
// what the runtime holds.
func TestDeviceStreamCallBudget(t *testing.T) {
	for _, b := range budgetBackends {
		t.Run(b.name, func(t *testing.T) {
			env := append(b.env(t), budgetEnv+"="+b.name)
			cmd := selfexec.Command(env, "-test.run=^TestDeviceStreamCallBudgetChild$", "-test.v", "-test.count=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestDeviceStreamCallBudgetChild") {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "budget_test.go") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// TestDeviceStreamCallBudgetChild is not a test: it is the child that
// TestDeviceStreamCallBudget starts, and does nothing otherwise.
func TestDeviceStreamCallBudgetChild(t *testing.T) {
	name := os.Getenv(budgetEnv)
	if name == "" {
		t.Skip("child process of TestDeviceStreamCallBudget")
	}
	var b budgetBackend
	for _, c := range budgetBackends {
		if c.name == name {
			b = c
		}
	}
	path := ctest.Path(t, b.library)
	if b.setup != nil {
		b.setup(t, path)
	}
	costs, ok := gpurttest.CostsOf(path)
	if !ok {
		t.Fatalf("%s counts no costs", path)
	}
	for _, bk := range device.Backends() {
		if bk.Name() == b.backend {
			if _, err := bk.Probe(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	dev, err := device.Lookup(b.typ, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []struct {
		name string
		make func() arrow.RecordBatch
	}{{"wide", sample.WideBatch}, {"nested", sample.NestedBatch}} {
		t.Run(batch.name, func(t *testing.T) {
			rec := batch.make()
			defer rec.Release()
			measureImports(t, dev, rec, costs, path)
		})
	}
}

// measureImports imports rec, copied to dev once, budgetImports+1 times
// from a device stream as C's structs are read (the first makes what the
// device keeps for imports), and holds each of the others to the budget.
func measureImports(t *testing.T, dev device.Device, rec arrow.RecordBatch, costs func() gpurttest.Costs, path string) {
	defer identity.Set(identity.Set(false))
	ctx := context.Background()
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Release()
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	batches := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for range budgetImports + 1 {
			db.Retain()
			if !yield(db, nil) {
				return
			}
		}
	}
	if err := stream.ExportDeviceStream(rec.Schema(), dev.Type(), iter.Seq2[*cdevice.DeviceRecordBatch, error](batches), s); err != nil {
		t.Fatal(err)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	reads := gpurttest.ValueReads(rec)
	live := liveOf(t, path)
	var before []int64
	var worst gpurttest.Costs
	for i := range budgetImports + 1 {
		c0 := costs()
		got, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := costs().Minus(c0)
		if err := sameBatch(ctx, got, rec); err != nil {
			t.Fatalf("import %d: %v", i, err)
		}
		got.Release()
		if i == 0 {
			before = live()
			continue
		}
		calls := int64(budgetCalls + reads)
		if c.BatchedCopies > 0 {
			calls = budgetCalls
		}
		if c.RoundTrips > 1 || c.PageableCopies != 0 || c.StreamsMade != 0 || c.EventsMade != 0 || c.DeviceSwitches > 1 || c.Calls > calls {
			t.Fatalf("import %d of a batch with %d values to read: %v; want at most 1 round trip, 0 pageable copies, streams or events made, 1 device switch, %d calls",
				i, reads, c, calls)
		}
		worst = gpurttest.Costs{RoundTrips: max(worst.RoundTrips, c.RoundTrips), DeviceSwitches: max(worst.DeviceSwitches, c.DeviceSwitches),
			Calls: max(worst.Calls, c.Calls), BatchedCopies: max(worst.BatchedCopies, c.BatchedCopies)}
	}
	if after := live(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the double holds %v (allocations, streams, events) after %d imports, %v after the first", after, budgetImports, before)
	}
	t.Logf("%d values read an import; the costliest import: %v", reads, worst)
}

// liveOf returns a reader of the double's live allocations, streams and
// events.
func liveOf(t *testing.T, path string) func() []int64 {
	lib, err := ffi.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fns := []uintptr{must(lib.Symbol("fake_cuda_live_allocations")), must(lib.Symbol("fake_cuda_live_streams")), must(lib.Symbol("fake_cuda_live_events"))}
	return func() []int64 {
		var n []int64
		for _, fn := range fns {
			n = append(n, int64(ffi.Call(fn)))
		}
		return n
	}
}

// sameBatch brings got to the host and compares it with want.
func sameBatch(ctx context.Context, got *cdevice.DeviceRecordBatch, want arrow.RecordBatch) error {
	host, err := got.ToHost(ctx)
	if err != nil {
		return err
	}
	defer host.Release()
	for i, c := range want.Columns() {
		if h := host.Column(i); !array.Equal(h, c) {
			return fmt.Errorf("column %s differs", want.ColumnName(i))
		}
	}
	return nil
}
