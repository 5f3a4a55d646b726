package drivermgr

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// How long a call whose context has ended may still take to come back
// before it is abandoned (watcher.grace): where the driver took the
// statement's cancel, cancelGrace, for it stops the call itself (a
// server's round trip, slower on a loaded machine); otherwise
// abandonGrace, within which the caller gets the context's error.
const (
	abandonGrace = 50 * time.Millisecond
	cancelGrace  = 2 * time.Second
)

// ErrAbandoned is what a connection answers while a call abandoned at its
// deadline is still running in the driver (adbcerr.Abandoned, an
// adbcerr.InvalidState error); it answers normally again once that call
// comes back.
var ErrAbandoned = adbcerr.Abandoned

// abandonment is a connection's record of a call abandoned at its
// deadline: the releases asked for meanwhile run when it comes back.
// running is written under amu with after, and read without it by every
// call (lock).
type abandonment struct {
	running atomic.Bool
	after   []func() // Closes asked for meanwhile
}

// abandoned reports whether an abandoned call of c is still running.
func (c *connection) abandoned() bool { return c.ab.running.Load() }

// afterAbandoned runs f once the abandoned call comes back, and reports
// true, if one is running; else it reports false and does nothing. Callers
// ask abandoned first, so that f is made only when it may be kept (a
// Close that meets an abandonment begun after that waits for the lock, as
// it would after this check).
func (c *connection) afterAbandoned(f func()) bool {
	c.amu.Lock()
	defer c.amu.Unlock()
	running := c.ab.running.Load()
	if running {
		c.ab.after = append(c.ab.after, f)
	}
	return running
}

// A longCall is a call withDeadline may abandon: run makes it, holding the
// connection, with its scratch memory; orphan releases what it made when it
// came back after its caller had left. (An interface, so that a call's
// state is one allocation or none: run may run on another goroutine, so a
// closure would be allocated on every call, and so would what it captures.)
type longCall interface {
	run(m *cmem) error
	orphan()
}

// A funcCall is a longCall of functions, for the calls rare enough that
// their closures' allocations do not matter (metadata, commit): do makes
// the call, left (may be nil) releases what an abandoned one made.
type funcCall struct {
	do   func(m *cmem) error
	left func()
}

func (f funcCall) run(m *cmem) error { return f.do(m) }

func (f funcCall) orphan() {
	if f.left != nil {
		f.left()
	}
}

// withDeadline is with for a call that may run long (a query): once ctx
// ends, the call gets its watcher's grace to come back (a driver that
// cancels stops it: the statement's watch, which the call puts in *wp, asks
// it to; wp nil or empty: no watch), then its caller gets ctx's error at
// once while the call goes on in the driver. The connection stays held by
// it (other calls answer ErrAbandoned, Closes are deferred) until it comes
// back; then its orphan releases what it made, and the deferred Closes
// run. Without a ctx that can end, it is with. After an abandonment (an
// error wrapping ErrAbandoned) the caller must not read what the call
// writes: orphan has it.
func (c *connection) withDeadline(ctx context.Context, what string, wp *atomic.Pointer[watcher], call longCall) error {
	if ctx.Done() == nil {
		return c.with(call.run)
	}
	if err := c.lock(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- call.run(c.scratch) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		var w *watcher
		if wp != nil {
			w = wp.Load()
		}
		t := time.NewTimer(w.grace())
		select {
		case err = <-done:
			t.Stop()
			if err != nil {
				err = errors.Join(ctx.Err(), err)
			}
		case <-t.C:
			c.amu.Lock()
			c.ab.running.Store(true)
			c.amu.Unlock()
			go c.finishAbandoned(done, call)
			return fmt.Errorf("%s: %w: abandoned at its deadline; %w until the driver returns", what, ctx.Err(), ErrAbandoned)
		}
	}
	c.scratch.free()
	c.mu.Unlock()
	return err
}

// finishAbandoned waits for an abandoned call, releases what it made, and
// gives the connection back; c.mu is held for it.
func (c *connection) finishAbandoned(done <-chan error, call longCall) {
	<-done
	call.orphan()
	c.scratch.free()
	c.amu.Lock()
	after := c.ab.after
	c.ab.after = nil
	c.ab.running.Store(false)
	c.amu.Unlock()
	c.mu.Unlock()
	for _, f := range after {
		f()
	}
}
