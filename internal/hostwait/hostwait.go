package hostwait

import (
	"context"
	"time"
)

// Backoff bounds between two polls: short at first, since most events are
// done by the time an import looks, then no more than a millisecond late.
const (
	firstPause = 20 * time.Microsecond
	maxPause   = time.Millisecond
)

// Until calls done until it reports true or fails, pausing between calls,
// and gives up with ctx's error once ctx is done. A ctx that can never be
// done (context.Background) makes it call block instead: the runtime's own
// blocking wait, which costs no polling.
func Until(ctx context.Context, done func() (bool, error), block func() error) error {
	if ctx.Done() == nil {
		return block()
	}
	pause := firstPause
	var timer *time.Timer
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, err := done()
		if err != nil || ok {
			return err
		}
		if timer == nil {
			timer = time.NewTimer(pause)
			defer timer.Stop()
		} else {
			timer.Reset(pause)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		pause = min(2*pause, maxPause)
	}
}
