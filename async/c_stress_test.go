package async_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/purearrow/cdevice/async"
)

// TestCStress: C producers on 8 foreign threads each, several streams at
// once, thousands of batches, cancel at random points (from the reader or
// another goroutine), 100 runs (10 with -short). Every run must end with the
// handlers released, every task extracted exactly once, and nothing leaked.
func TestCStress(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 10
	}
	const streams, threads, batches, rows = 3, 8, 2000, 2
	for run := range runs {
		acNoLeaks(t)
		rng := rand.New(rand.NewPCG(uint64(run), 42))
		ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
		var wg sync.WaitGroup
		for s := range streams {
			depth, stopAt, fromOther := 1+rng.IntN(64), rng.IntN(batches+batches/4), rng.IntN(2) == 0
			h, err := async.NewHandler(async.WithQueueDepth(depth))
			if err != nil {
				t.Fatal(err)
			}
			acProduce(t, h, batches, rows, threads, -1, false)
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				for b, err := range h.All(ctx) {
					if err != nil {
						t.Errorf("run %d stream %d: %v", run, s, err)
						return
					}
					acCheckBatch(t, ctx, n, rows, b)
					if n++; n == stopAt {
						if fromOther {
							go h.Cancel()
						} else {
							h.Cancel()
						}
					}
				}
				if stopAt >= batches && n != batches {
					t.Errorf("run %d stream %d: %d batches, want %d", run, s, n, batches)
				}
				if err := h.Close(ctx); err != nil {
					t.Errorf("run %d stream %d: Close: %v", run, s, err)
				}
			}()
		}
		wg.Wait()
		cancel()
		acFn(t, "as_wait")()
		if d, x := acI64(t, "as_tasks_delivered"), acI64(t, "as_extract_calls"); d != x {
			t.Fatalf("run %d: %d extract_data calls for %d tasks", run, x, d)
		}
		if live := acI64(t, "as_live"); live != 0 {
			t.Fatalf("run %d: %d C producers, tasks or batches still live", run, live)
		}
		if t.Failed() {
			return
		}
	}
}
