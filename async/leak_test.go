package async_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
)

// An async handler and producer each show in Leaks under their own name,
// with the site that made them, until the stream is over.
func TestLeaksNameAsyncObjects(t *testing.T) {
	cdevice.TraceLeaks(true)
	defer cdevice.TraceLeaks(false)
	before := cdevice.LiveLeaks()
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{1, 2, 3}, nil)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 3)
	col.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec, rec, rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()

	h, err := async.NewHandler(async.WithQueueDepth(1))
	if err != nil {
		t.Fatal(err)
	}
	wantSite := func(kind, frame string) {
		t.Helper()
		for _, s := range cdevice.LeakSites() {
			if strings.HasPrefix(s, kind) && strings.Contains(s, frame) {
				return
			}
		}
		t.Errorf("no %s made by %s among the leak sites:\n%s", kind, frame, strings.Join(cdevice.LeakSites(), "\n"))
	}
	if l := cdevice.LiveLeaks(); l.AsyncHandlers != before.AsyncHandlers+1 || l.Exports() != before.Exports()+1 {
		t.Errorf("after NewHandler: %s", l)
	}
	wantSite("async handler", "async.NewHandler")

	ctx := context.Background()
	produced := make(chan error, 1)
	go func() { produced <- async.ProduceReader(ctx, rdr, device.CPU, h.C()) }()
	first, err := h.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l := cdevice.LiveLeaks(); l.AsyncProducers != before.AsyncProducers+1 {
		t.Errorf("while producing: %s", l)
	}
	wantSite("async producer", "async.Produce")
	first.Release()
	n := 1
	for batch, err := range h.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if batch.Length != 3 {
			t.Errorf("batch of %d rows", batch.Length)
		}
		n++
	}
	if err := <-produced; err != nil || n != 3 {
		t.Fatalf("ProduceReader: %v after %d batches", err, n)
	}
	<-h.Done()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	after := cdevice.LiveLeaks()
	after.CAllocations = before.CAllocations // the handler's out struct goes with the Handler's cleanup
	if after != before {
		t.Errorf("after the stream: %s, before: %s", after, before)
	}
}
