package async_test

import (
	"context"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	_ "github.com/purearrow/cdevice/device/cuda"
	_ "github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/importtest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// TestAsyncCallBudget holds, on each runtime double, the Next that finds
// queued tasks waiting to one round trip for the sizes of all of them
// (one device switch, no copy into pageable memory, no stream or event
// made, 4 runtime calls plus one a value where the runtime has no batched
// copy); the Nexts that deliver the others cost nothing of the device.
func TestAsyncCallBudget(t *testing.T) {
	gpurttest.EachDouble(t, "TestAsyncCallBudgetChild", "budget_test.go")
}

// TestAsyncCallBudgetChild is not a test: it is the child that
// TestAsyncCallBudget starts, and does nothing otherwise.
func TestAsyncCallBudgetChild(t *testing.T) {
	m := gpurttest.ChildDouble(t)
	defer identity.Set(identity.Set(false))
	const queued = 8
	ctx := context.Background()
	rec := sample.WideBatch()
	defer rec.Release()
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, m.Dev)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Release()
	// One import first, which makes the staging the device keeps.
	c := cdevice.New[abi.DeviceArray]()
	defer cdevice.Free(c)
	if err := db.Export(c, nil); err != nil {
		t.Fatal(err)
	}
	warm, err := cdevice.ImportDeviceRecordBatchOnDeviceWithSchema(context.Background(), c, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	warm.Release()

	h, err := async.NewHandler(async.WithQueueDepth(queued))
	if err != nil {
		t.Fatal(err)
	}
	produced := make(chan error, 1)
	go func() {
		produced <- async.Produce(ctx, rec.Schema(), m.Dev.Type(), async.Batches(importtest.Repeat(db, queued)), h.C())
	}()
	if !settle.Eventually(func() bool { return h.Queued() == queued }) {
		t.Fatalf("%d tasks queued, want %d", h.Queued(), queued)
	}
	reads := int64(queued * gpurttest.ValueReads(rec))
	for i := range queued {
		c0 := m.Costs()
		b, err := h.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := m.Costs().Minus(c0)
		if err := importtest.SameBatch(ctx, b.DeviceRecordBatch, rec); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		b.Release()
		if i > 0 {
			if c.RoundTrips != 0 || c.Calls != 0 {
				t.Fatalf("Next %d, delivering a batch imported already: %v; want nothing of the device", i, c)
			}
			continue
		}
		calls := 4 + reads
		if c.BatchedCopies > 0 {
			calls = 4
		}
		if c.RoundTrips != 1 || c.PageableCopies != 0 || c.StreamsMade != 0 || c.EventsMade != 0 || c.DeviceSwitches > 1 || c.Calls > calls {
			t.Fatalf("the Next that imports %d queued batches (%d values to read): %v; want 1 round trip, 0 pageable copies, streams or events made, at most 1 device switch, %d calls",
				queued, reads, c, calls)
		}
		t.Logf("%d queued batches, %d values, imported by one Next: %v", queued, reads, c)
	}
	if _, err := h.Next(ctx); err == nil {
		t.Fatal("a batch after the last")
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
}
