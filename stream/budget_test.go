package stream_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	_ "github.com/purearrow/cdevice/device/cuda"
	_ "github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/importtest"
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

// TestDeviceStreamCallBudget holds the budget above on each double, each
// in a child process whose CUDA or HIP backend is that double.
func TestDeviceStreamCallBudget(t *testing.T) {
	gpurttest.EachDouble(t, "TestDeviceStreamCallBudgetChild", "budget_test.go")
}

// TestDeviceStreamCallBudgetChild is not a test: it is the child that
// TestDeviceStreamCallBudget starts, and does nothing otherwise.
func TestDeviceStreamCallBudgetChild(t *testing.T) {
	m := gpurttest.ChildDouble(t)
	for _, batch := range sample.DeviceShapes {
		t.Run(batch.Name, func(t *testing.T) {
			rec := batch.Make()
			defer rec.Release()
			measureImports(t, m, rec)
		})
	}
}

// measureImports imports rec, copied to dev once, budgetImports+1 times
// from a device stream as C's structs are read (the first makes what the
// device keeps for imports), and holds each of the others to the budget.
func measureImports(t *testing.T, m gpurttest.Measured, rec arrow.RecordBatch) {
	dev, costs := m.Dev, m.Costs
	defer identity.Set(identity.Set(false))
	ctx := context.Background()
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Release()
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportDeviceStream(rec.Schema(), dev.Type(), importtest.Repeat(db, budgetImports+1), s); err != nil {
		t.Fatal(err)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	reads := gpurttest.ValueReads(rec)
	live := m.Live
	var before []int64
	var worst gpurttest.Costs
	for i := range budgetImports + 1 {
		c0 := costs()
		got, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := costs().Minus(c0)
		if err := importtest.SameBatch(ctx, got, rec); err != nil {
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
