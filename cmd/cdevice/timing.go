package main

import (
	"slices"
	"time"
)

// now is the clock the measurements read; tests swap in a coarse one.
var now = time.Now

// since is the time from t0 as the reports give it: 0 when the clock did not
// move (Windows' and Wine's tick about every 16 ms, so a fast step truly
// reads 0), never negative. A figure that is divided by comes from perCall,
// never from since.
func since(t0 time.Time) time.Duration { return max(now().Sub(t0), 0) }

// minTiming is the least a timed batch of calls takes: well above the
// coarsest clock a measurement may meet (Windows' and Wine's tick about
// every 16ms, where Linux's reads nanoseconds).
const minTiming = 20 * time.Millisecond

// perCall is how long one call of f takes: f runs in batches that double
// until one batch lasts minTiming, and the time of that batch is shared out.
// The answer is never zero, so every rate derived from it is finite.
func perCall(f func() error) (time.Duration, error) {
	for n := 1; ; n *= 2 {
		t0 := now()
		for range n {
			if err := f(); err != nil {
				return 0, err
			}
		}
		if d := now().Sub(t0); d >= minTiming || n >= 1<<24 {
			return max(d/time.Duration(n), 1), nil
		}
	}
}

// medianPerCall is the median of reps measurements of perCall(f).
func medianPerCall(reps int, f func() error) (time.Duration, error) {
	ds := make([]time.Duration, reps)
	for i := range ds {
		d, err := perCall(f)
		if err != nil {
			return 0, err
		}
		ds[i] = d
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}
