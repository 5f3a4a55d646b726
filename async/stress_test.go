package async_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
)

// The Go↔Go stress test: stressRuns runs of stressPairs Produce/Handler
// pairs at once, each pair streaming up to stressMaxBatches batches through
// the ABI, with the consumer or the producer stopping at a random point in
// most of them.
const (
	stressRuns       = 100
	stressRunsShort  = 10
	stressPairs      = 8
	stressMaxBatches = 400
	stressRunTimeout = 60 * time.Second
)

// stressMode is how one pair ends.
type stressMode int

const (
	stressToEnd            stressMode = iota // the consumer reads to io.EOF
	stressCancel                             // the consumer calls Cancel (twice, once concurrently) and drains
	stressClose                              // the consumer calls Close part way
	stressBreak                              // the consumer breaks out of All, then closes
	stressProducerCtx                        // Produce's context is cancelled part way
	stressConsumerCtx                        // the consumer's context is cancelled while it waits in Next
	stressSourceError                        // the source fails part way: on_error, then release
	stressCancelAsync                        // another goroutine calls Cancel after a random delay while the consumer reads
	stressCloseAsync                         // another goroutine calls Close after a random delay while the consumer reads
	stressProducerCtxAsync                   // Produce's context is cancelled after a random delay
	stressModes                              // the number of modes
)

func (m stressMode) String() string {
	return [...]string{"to-end", "cancel", "close", "break", "producer-ctx", "consumer-ctx", "source-error",
		"cancel-async", "close-async", "producer-ctx-async"}[m]
}

// A stressPlan is what one pair does, drawn from the run's seeded
// generator.
type stressPlan struct {
	batches int           // batches the source has
	depth   int           // the handler's queue depth
	mode    stressMode    // how it ends
	at      int           // after how many consumed (or produced, for stressSourceError) batches
	slow    int           // the consumer pauses briefly every slow batches (0: never)
	delay   time.Duration // for the -async modes: when the other goroutine acts
}

func drawPlan(rng *rand.Rand) stressPlan {
	p := stressPlan{
		batches: rng.IntN(stressMaxBatches + 1),
		depth:   []int{1, 2, 3, 8, 64}[rng.IntN(5)],
		mode:    stressMode(rng.IntN(int(stressModes))),
	}
	p.at = rng.IntN(p.batches + 1)
	if rng.IntN(4) == 0 {
		p.slow = 1 + rng.IntN(50)
	}
	p.delay = time.Duration(rng.IntN(2000)) * time.Microsecond
	return p
}

var errStressSource = errors.New("stress: the source failed")

// stressSchema's batches: stressBatch(i) has i%17 rows, so the lengths the
// consumer sees tell it the order.
var stressSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int32},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

const stressKinds = 17

// stressBatches builds the stressKinds device batches every pair streams
// (each yield retains one), released when the test ends.
func stressBatches(tb testing.TB) []*cdevice.DeviceRecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, stressSchema)
	defer b.Release()
	dbs := make([]*cdevice.DeviceRecordBatch, stressKinds)
	tb.Cleanup(func() {
		for _, db := range dbs {
			if db != nil {
				db.Release()
			}
		}
	})
	for k := range dbs {
		for j := range k {
			b.Field(0).(*array.Int32Builder).Append(int32(j))
			if j%5 == 4 {
				b.Field(1).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("s", j))
			}
		}
		rec := b.NewRecordBatch()
		db, err := cdevice.CopyRecordBatchToDevice(context.Background(), rec, device.CPU)
		rec.Release()
		if err != nil {
			tb.Fatal(err)
		}
		dbs[k] = db
	}
	return dbs
}

// runPair runs one Produce/Handler pair to its planned end and returns what
// went wrong, if anything.
func runPair(dbs []*cdevice.DeviceRecordBatch, p stressPlan, delivered *atomic.Int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), stressRunTimeout)
	defer cancel()
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()

	src := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for i := 0; ; i++ {
			if p.mode == stressSourceError && i == p.at {
				yield(nil, errStressSource)
				return
			}
			if i == p.batches {
				return
			}
			db := dbs[i%stressKinds]
			db.Retain() // the yielded batch belongs to Produce
			if !yield(db, nil) {
				return
			}
		}
	}
	h, err := async.NewHandler(async.WithQueueDepth(p.depth))
	if err != nil {
		return fmt.Errorf("NewHandler: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- async.Produce(pctx, stressSchema, device.CPU.Type(), async.Batches(src), h.C()) }()

	closed := false
	closeNow := func() error {
		closed = true
		return h.Close(ctx)
	}
	defer func() {
		if !closed {
			h.Close(ctx)
		}
	}()

	if _, err := h.Schema(ctx); err != nil {
		return fmt.Errorf("Schema: %w", err)
	}

	// check reads one batch: its length tells its place in the stream.
	n := 0
	defer func() { delivered.Add(int64(n)) }()
	check := func(b async.Batch) error {
		if want := int64(n % stressKinds); b.Length != want {
			return fmt.Errorf("batch %d: %d rows, want %d (out of order?)", n, b.Length, want)
		}
		n++
		if p.slow > 0 && n%p.slow == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		return nil
	}
	// next reads one batch, releasing it after the check.
	next := func(ctx context.Context) error {
		b, err := h.Next(ctx)
		if err != nil {
			return err
		}
		defer b.Release()
		return check(b)
	}
	// drain reads until an error; io.EOF comes back as nil.
	drain := func() error {
		for {
			if err := next(ctx); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	// readTo reads until n == at or the stream ends (io.EOF: false).
	readTo := func(at int) (bool, error) {
		for n < at {
			if err := next(ctx); err != nil {
				if errors.Is(err, io.EOF) {
					return false, nil
				}
				return false, err
			}
		}
		return true, nil
	}

	var cerr error                         // the consumer's verdict
	wantProduce := func(err error) error { // what Produce may return
		if err != nil {
			return fmt.Errorf("Produce: %w", err)
		}
		return nil
	}
	switch p.mode {
	case stressToEnd:
		if cerr = drain(); cerr == nil && n != p.batches {
			cerr = fmt.Errorf("got %d batches, want %d", n, p.batches)
		}
	case stressCancel:
		if _, cerr = readTo(p.at); cerr == nil {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); h.Cancel() }()
			h.Cancel()
			wg.Wait()
			// Tasks already queued or in flight may still come; then the
			// end (or a cancellation error).
			if err := drain(); err != nil && !errors.Is(err, context.Canceled) {
				cerr = fmt.Errorf("after Cancel: %w", err)
			}
			if n > p.batches {
				cerr = fmt.Errorf("got %d batches of %d", n, p.batches)
			}
		}
	case stressClose:
		if _, cerr = readTo(p.at); cerr == nil {
			if err := closeNow(); err != nil {
				cerr = fmt.Errorf("Close: %w", err)
			}
		}
	case stressBreak:
		for b, err := range h.All(ctx) {
			if err != nil {
				cerr = err
				break
			}
			if cerr = check(b); cerr != nil || n >= p.at {
				break
			}
		}
		if cerr == nil {
			if err := closeNow(); err != nil {
				cerr = fmt.Errorf("Close: %w", err)
			}
		}
	case stressProducerCtx:
		if _, cerr = readTo(p.at); cerr == nil {
			pcancel()
			// The producer stops: the end, or its error through on_error.
			if err := drain(); err != nil && !errors.Is(err, cdevice.ErrProducer) && !errors.Is(err, context.Canceled) {
				cerr = fmt.Errorf("after the producer's context ended: %w", err)
			}
		}
		wantProduce = func(err error) error {
			if err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("Produce after its context was cancelled: %w", err)
			}
			return nil
		}
	case stressConsumerCtx:
		var more bool
		if more, cerr = readTo(p.at); cerr == nil && more {
			go func() { time.Sleep(50 * time.Microsecond); ccancel() }()
			for cerr == nil {
				err := next(cctx)
				if err == nil {
					continue
				}
				if !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
					cerr = fmt.Errorf("Next with a cancelled context: %w", err)
				}
				break
			}
			if cerr == nil {
				if err := closeNow(); err != nil {
					cerr = fmt.Errorf("Close: %w", err)
				}
			}
		}
	case stressSourceError:
		err := drain()
		var pe *cdevice.ProducerError
		switch {
		case !errors.As(err, &pe):
			cerr = fmt.Errorf("the source failed after %d batches; the consumer got %v, want a *ProducerError", p.at, err)
		case n != p.at:
			cerr = fmt.Errorf("got %d batches before the error, want %d", n, p.at)
		}
		wantProduce = func(err error) error {
			if !errors.Is(err, errStressSource) {
				return fmt.Errorf("Produce = %v, want the source's error", err)
			}
			return nil
		}
	case stressCancelAsync:
		time.AfterFunc(p.delay, h.Cancel)
		if cerr = drain(); cerr == nil && n > p.batches {
			cerr = fmt.Errorf("got %d batches of %d", n, p.batches)
		}
	case stressCloseAsync:
		closed = true // by the other goroutine
		closeErr := make(chan error, 1)
		time.AfterFunc(p.delay, func() { closeErr <- h.Close(ctx) })
		if cerr = drain(); cerr == nil && n > p.batches {
			cerr = fmt.Errorf("got %d batches of %d", n, p.batches)
		}
		select {
		case err := <-closeErr:
			if err != nil {
				cerr = fmt.Errorf("Close: %w", err)
			}
		case <-ctx.Done():
			cerr = fmt.Errorf("Close did not return: %w", ctx.Err())
		}
	case stressProducerCtxAsync:
		time.AfterFunc(p.delay, pcancel)
		if err := drain(); err != nil && !errors.Is(err, cdevice.ErrProducer) {
			cerr = fmt.Errorf("after the producer's context ended: %w", err)
		}
		wantProduce = func(err error) error {
			if err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("Produce after its context was cancelled: %w", err)
			}
			return nil
		}
	}
	if cerr != nil {
		return cerr
	}
	if !closed {
		// Nothing stopped the stream early: Produce ends on its own.
		select {
		case <-h.Done():
		case <-ctx.Done():
			return fmt.Errorf("Done not closed: %w", ctx.Err())
		}
		if err := closeNow(); err != nil {
			return fmt.Errorf("Close: %w", err)
		}
	}
	select {
	case err := <-errc:
		if err := wantProduce(err); err != nil {
			return err
		}
	case <-ctx.Done():
		return fmt.Errorf("Produce did not return: %w", ctx.Err())
	}
	select {
	case <-h.Done():
	default:
		return errors.New("Produce returned before the handler was released")
	}
	return nil
}

// TestStressAsync: stressRuns runs (stressRunsShort with -short) of
// stressPairs Produce/Handler pairs at once through the ABI, thousands of
// batches in all, ending early at random points; every run ends, every
// pair ends as planned, and nothing leaks after each run.
func TestStressAsync(t *testing.T) {
	runs := stressRuns
	if testing.Short() {
		runs = stressRunsShort
	}
	dbs := stressBatches(t)
	base := cdevice.LiveLeaks() // the shared batches
	panics := base.CallbackPanics
	total := 0
	var modes [stressModes]int
	var delivered atomic.Int64
	done := 0
	for run := range runs {
		done++
		rng := rand.New(rand.NewPCG(uint64(run), 0xa5c0))
		plans := make([]stressPlan, stressPairs)
		for i := range plans {
			plans[i] = drawPlan(rng)
			total += plans[i].batches
			modes[plans[i].mode]++
		}
		errs := make([]error, stressPairs)
		var wg sync.WaitGroup
		for i, p := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = runPair(dbs, p, &delivered)
			}()
		}
		ended := make(chan struct{})
		go func() { wg.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(stressRunTimeout + 10*time.Second):
			t.Fatalf("run %d did not end in %v", run, stressRunTimeout+10*time.Second)
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("run %d pair %d (%+v, mode %s): %v", run, i, plans[i], plans[i].mode, err)
			}
		}
		checkLeaks(t, base)
		if t.Failed() {
			break
		}
	}
	if p := cdevice.LiveLeaks().CallbackPanics; p != panics {
		t.Errorf("%d callback panics", p-panics)
	}
	t.Logf("%d of %d runs, %d batches offered and %d delivered in all; pairs per mode:", done, runs, total, delivered.Load())
	for m, k := range modes {
		t.Logf("  %-18s %d", stressMode(m), k)
	}
}

// Produce stops when its context is done even while the consumer keeps
// ahead of it (a slow source and a deep queue: Produce never runs out of
// credit, so it never waits for a request): the handler gets on_error and
// Produce returns the context's error, as documented.
func TestProduceStopsWhenContextDone(t *testing.T) {
	t.Cleanup(noLeaksAfter(t))
	dbs := stressBatches(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	endless := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for i := 0; ; i++ {
			time.Sleep(20 * time.Microsecond) // the consumer is faster
			db := dbs[i%stressKinds]
			db.Retain()
			if !yield(db, nil) {
				return
			}
		}
	}
	h, err := async.NewHandler(async.WithQueueDepth(64))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- async.Produce(pctx, stressSchema, device.CPU.Type(), async.Batches(endless), h.C()) }()
	n := 0
	var nerr error
	for {
		b, err := h.Next(ctx)
		if err != nil {
			nerr = err
			break
		}
		b.Release()
		if n++; n == 100 {
			pcancel()
		}
		if n == 100+300 {
			break
		}
	}
	if nerr == nil {
		t.Errorf("Produce went on for %d batches after its context was cancelled", n-100)
		closeHandler(t, h)
	} else if pe := (*cdevice.ProducerError)(nil); !errors.As(nerr, &pe) || pe.Code == 0 {
		t.Errorf("the consumer got %v after Produce's context was cancelled, want a *ProducerError", nerr)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Produce = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Produce did not return")
	}
	waitDone(t, h, 5*time.Second)
	if nerr != nil {
		closeHandler(t, h)
	}
}
