//go:build cgo

// Async interop with an independent implementation of the Async Device
// Stream Interface: arrow-go's cgo-based arrow/cdata, both ways round, at
// several queue depths and many runs each (its races show up now and then,
// not every time). CI runs these tests with
// CGO_ENABLED=1 go test -run Interop ./async

package async_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

const interopRows = 5

var (
	interopDepths  = []int{1, 2, 4, 8}
	interopBatches = []int{0, 1, 3, 17}
)

// interopRuns is how often each depth and batch count runs, n unless
// -short: the races these tests guard against bite now and then, not
// every time.
func interopRuns(n int) int {
	if testing.Short() {
		return 5
	}
	return n
}

// Our abi structs and arrow-go's (C's own structs from abi.h) must be the
// same memory for the pointer conversions below.
func TestInteropAsyncStructSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		a, c uintptr
	}{
		{"ArrowAsyncDeviceStreamHandler", unsafe.Sizeof(abi.AsyncDeviceStreamHandler{}), unsafe.Sizeof(cdata.CArrowAsyncDeviceStreamHandler{})},
		{"ArrowAsyncProducer", unsafe.Sizeof(abi.AsyncProducer{}), unsafe.Sizeof(cdata.CArrowAsyncProducer{})},
		{"ArrowAsyncTask", unsafe.Sizeof(abi.AsyncTask{}), unsafe.Sizeof(cdata.CArrowAsyncTask{})},
	} {
		if c.a != c.c {
			t.Errorf("%s: ours %d bytes, C's %d", c.name, c.a, c.c)
		}
	}
}

// interopCheck checks batch b (interopRows rows, as acBatch makes it).
func interopCheck(t *testing.T, b int, got arrow.RecordBatch) {
	t.Helper()
	want := acBatch(b, interopRows)
	defer want.Release()
	if !array.RecordEqual(want, got) {
		t.Errorf("batch %d:\nwant %v\ngot  %v", b, want, got)
	}
}

func interopRecords(n int) []arrow.RecordBatch {
	recs := make([]arrow.RecordBatch, n)
	for b := range recs {
		recs[b] = acBatch(b, interopRows)
	}
	return recs
}

// interopForEach runs f interopRuns(runs) times for every depth and batch
// count, each run with its own leak check.
func interopForEach(t *testing.T, runs int, f func(t *testing.T, ctx context.Context, depth, batches int)) {
	for _, depth := range interopDepths {
		for _, batches := range interopBatches {
			t.Run(fmt.Sprintf("depth=%d/batches=%d", depth, batches), func(t *testing.T) {
				failOnCallbackPanics(t)
				for range interopRuns(runs) {
					base := cdevice.LiveLeaks()
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					f(t, ctx, depth, batches)
					cancel()
					checkLeaks(t, base)
					if t.Failed() {
						return
					}
				}
			})
		}
	}
}

// TestInteropProduceToArrowGoHandler: our ProduceReader drives arrow-go's
// CreateAsyncDeviceStreamHandler. arrow-go's handler hands each task to a
// goroutine of its own that calls request(producer, 1) before extracting
// it, and keeps doing so for the tasks it has queued after the end of the
// stream and after its release returned: the producer must outlive its
// Produce call until every task handed out is extracted.
func TestInteropProduceToArrowGoHandler(t *testing.T) {
	interopForEach(t, 200, func(t *testing.T, ctx context.Context, depth, batches int) {
		hc := cdevice.New[abi.AsyncDeviceStreamHandler]()
		defer cdevice.Free(hc)
		ch := cdata.CreateAsyncDeviceStreamHandler(ctx, uint64(depth), (*cdata.CArrowAsyncDeviceStreamHandler)(unsafe.Pointer(hc)))

		recs := interopRecords(batches)
		rdr, err := array.NewRecordReader(acSchema, recs)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		errc := make(chan error, 1)
		go func() { errc <- async.ProduceReader(ctx, rdr, device.CPU, hc, acMD(batches)) }()

		s := arrowGoStream(t, ctx, ch)
		if !s.Schema.Equal(acSchema) {
			t.Errorf("schema:\nwant %s\ngot  %s", acSchema, s.Schema)
		}
		if v, ok := s.AdditionalMetadata.GetValue("total_batches"); !ok || v != strconv.Itoa(batches) {
			t.Errorf("additional metadata %v, want total_batches=%d", s.AdditionalMetadata, batches)
		}
		drainArrowGo(t, ctx, s, errc, batches, nil)
	})
}

// arrowGoStream is what arrow-go's handler hands over first: the schema.
func arrowGoStream(t *testing.T, ctx context.Context, ch <-chan cdata.AsyncRecordBatchStream) cdata.AsyncRecordBatchStream {
	t.Helper()
	var s cdata.AsyncRecordBatchStream
	select {
	case s = <-ch:
	case <-ctx.Done():
		t.Fatal("arrow-go's handler never got the schema")
	}
	if s.Err != nil {
		t.Fatalf("arrow-go's handler: %v", s.Err)
	}
	return s
}

// drainArrowGo reads s's batches to the end (closed once arrow-go's task
// goroutine is done), checks each against acBatch and with each when not
// nil, then waits for our producer's return on errc.
func drainArrowGo(t *testing.T, ctx context.Context, s cdata.AsyncRecordBatchStream, errc <-chan error, batches int,
	each func(n int, msg cdata.RecordMessage)) {
	t.Helper()
	n := 0
	for msg := range s.Stream {
		if msg.Err != nil {
			t.Errorf("after %d batches: %v", n, msg.Err)
			continue
		}
		if each != nil {
			each(n, msg)
		}
		interopCheck(t, n, msg.Record)
		msg.Record.Release()
		n++
	}
	if n != batches {
		t.Errorf("%d batches, want %d", n, batches)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("producer: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the producer did not return")
	}
}

// TestInteropTaskMetadataToArrowGoHandler: each batch's Metadata, which
// Produce passes to on_next_task, reaches arrow-go's handler as its
// message's AdditionalMetadata.
func TestInteropTaskMetadataToArrowGoHandler(t *testing.T) {
	interopForEach(t, 5, func(t *testing.T, ctx context.Context, depth, batches int) {
		hc := cdevice.New[abi.AsyncDeviceStreamHandler]()
		defer cdevice.Free(hc)
		ch := cdata.CreateAsyncDeviceStreamHandler(ctx, uint64(depth), (*cdata.CArrowAsyncDeviceStreamHandler)(unsafe.Pointer(hc)))
		src := withTaskMetadata(acSource(ctx, batches, interopRows, nil), batchMD)
		errc := make(chan error, 1)
		go func() { errc <- async.Produce(ctx, acSchema, abi.DeviceCPU, src, hc) }()
		drainArrowGo(t, ctx, arrowGoStream(t, ctx, ch), errc, batches, func(n int, msg cdata.RecordMessage) {
			if v, ok := msg.AdditionalMetadata.GetValue("batch"); !ok || v != strconv.Itoa(n) {
				t.Errorf("batch %d: task metadata %v, want batch=%d", n, msg.AdditionalMetadata, n)
			}
		})
	})
}

// TestInteropArrowGoProducerToHandler: arrow-go's
// ExportAsyncRecordBatchStream drives our Handler, read to the end or
// closed part way through. arrow-go's producer frees itself before it
// releases the handler and dereferences extract_data's out without a NULL
// check: the Handler must call nothing of it once the stream is over, and
// give unread tasks back through a real out.
func TestInteropArrowGoProducerToHandler(t *testing.T) {
	for _, how := range []string{"drain", "close"} {
		t.Run(how, func(t *testing.T) {
			if how == "close" && testsupport.RaceEnabled() {
				// arrow-go's cancel (cdata/exports.go, asyncProducerCancel)
				// and its producer's deferred clean-up write the same field
				// without a lock: the race detector reports arrow-go's race,
				// not ours. Our Handler's cancel path runs under -race in
				// the C-producer tests.
				t.Skip("arrow-go's async producer races with itself on cancel")
			}
			// 50 runs: arrow-go's producer spins while it waits.
			interopForEach(t, 50, func(t *testing.T, ctx context.Context, depth, batches int) {
				interopArrowGoProducer(t, ctx, depth, batches, how == "close")
			})
		})
	}
	if n := arrowGoCancelRaces.Swap(0); n != 0 {
		t.Logf("arrow-go's cancel raced with its own clean-up %d times (recovered)", n)
	}
}

var arrowGoCancelRaces atomic.Int64

func interopArrowGoProducer(t *testing.T, ctx context.Context, depth, batches int, stop bool) {
	h, err := async.NewHandler(async.WithQueueDepth(depth))
	if err != nil {
		t.Fatal(err)
	}
	msgs := make(chan cdata.RecordMessage)
	fed := make(chan struct{})
	go func() { // the source: stops once the producer stops reading
		defer close(fed)
		defer close(msgs)
		for b := range batches {
			rec := acBatch(b, interopRows)
			md := batchMD(b)
			select {
			case msgs <- cdata.RecordMessage{Record: rec, AdditionalMetadata: md}:
			case <-ctx.Done():
				rec.Release()
				return
			}
		}
	}()
	errc := make(chan error, 1)
	go func() {
		defer func() {
			// arrow-go's cancel closes its done channel and only then
			// clears the field; a producer that sees the channel closed
			// first closes it again in its deferred clean-up. That race
			// is arrow-go's alone (no consumer can avoid it but by never
			// cancelling), and the clean-up has released our handler by
			// then: count it, do not crash.
			if p := recover(); p != nil {
				if !stop || fmt.Sprint(p) != "close of closed channel" {
					panic(p)
				}
				arrowGoCancelRaces.Add(1)
				errc <- nil
			}
		}()
		errc <- cdata.ExportAsyncRecordBatchStream(acSchema, msgs, (*cdata.CArrowAsyncDeviceStreamHandler)(unsafe.Pointer(h.C())))
	}()

	sc, err := h.Schema(ctx)
	if err != nil {
		t.Fatalf("Schema: %v", err)
	}
	if !sc.Equal(acSchema) {
		t.Errorf("schema:\nwant %s\ngot  %s", acSchema, sc)
	}
	read := batches
	if stop {
		read = batches / 2
	}
	n := 0
	for n < read {
		b, err := h.Next(ctx)
		if err != nil {
			t.Fatalf("after %d batches: %v", n, err)
		}
		if v, ok := b.Metadata.GetValue("batch"); !ok || v != strconv.Itoa(n) {
			t.Errorf("batch %d: task metadata %v", n, b.Metadata)
		}
		rec, err := b.ToHost(ctx)
		b.Release()
		if err != nil {
			t.Fatalf("batch %d: ToHost: %v", n, err)
		}
		interopCheck(t, n, rec)
		rec.Release()
		n++
	}
	if !stop {
		if _, err := h.Next(ctx); err != io.EOF {
			t.Errorf("Next after %d batches: %v, want io.EOF", n, err)
		}
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("ExportAsyncRecordBatchStream: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ExportAsyncRecordBatchStream did not return")
	}
	if stop { // the source may be blocked on a producer that stopped reading
		for m := range msgs {
			m.Record.Release()
		}
	}
	<-fed
}
