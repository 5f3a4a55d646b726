package drivermgr

import (
	"context"
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

// ErrAbandoned is what a connection answers while a call abandoned when its
// context ended is still running in the driver (adbcerr.Abandoned, an
// adbcerr.InvalidState error); it answers normally again once that call
// comes back.
var ErrAbandoned = adbcerr.Abandoned

// abandonment is a connection's record of a call abandoned when its
// context ended: the releases asked for meanwhile run when it comes back.
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
// connection, with its scratch memory; orphan releases what it made when
// its caller has left or gets the context's error instead (run may have
// failed: orphan then finds nothing to release); effect reports whether
// the call's success is a change in the database its caller must hear of
// (an update, a commit) rather than a result to read. (An interface, so
// that a call's state is one allocation or none: run may run on another
// goroutine, so a closure would be allocated on every call, and so would
// what it captures.)
type longCall interface {
	run(m *cmem) error
	orphan()
	effect() bool
}

// A funcCall is a longCall of functions, for the calls rare enough that
// their closures' allocations do not matter (metadata, commit): do makes
// the call, left (may be nil) releases what it made for a caller that will
// not read it, changes says whether its success is an effect.
type funcCall struct {
	do      func(m *cmem) error
	left    func()
	changes bool
}

func (f funcCall) run(m *cmem) error { return f.do(m) }

func (f funcCall) orphan() {
	if f.left != nil {
		f.left()
	}
}

func (f funcCall) effect() bool { return f.changes }

// withDeadline is with for a call that takes a context, as database/sql
// keeps one: once ctx has ended, a call is not made (the caller gets ctx's
// error, the driver is not called), and a call in flight ends with ctx's
// error whenever it comes back, what it made released (orphan), the
// driver's own error joined to it where it gave one. The call in flight
// gets its watcher's grace to come back (a driver that cancels stops it:
// the statement's watch, which the call puts in *wp, asks it to; wp nil or
// empty: no watch); past that its caller gets ctx's error at once while
// the call goes on in the driver. The connection stays held by it (other
// calls answer ErrAbandoned, Closes are deferred) until it comes back;
// then its orphan releases what it made, and the deferred Closes run.
// Only the success of a call whose success is an effect (effect: an
// update, a commit) that came back within the grace is reported as such:
// the change happened. Without a ctx that can end, it is with. After an
// error the caller must not read what the call writes: orphan has it.
func (c *connection) withDeadline(ctx context.Context, what string, wp *atomic.Pointer[watcher], call longCall) error {
	if ctx.Done() == nil {
		return c.with(call.run)
	}
	if ctx.Err() != nil {
		return adbcerr.Ended(ctx, what, nil)
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
		case <-t.C:
			c.amu.Lock()
			c.ab.running.Store(true)
			c.amu.Unlock()
			go c.finishAbandoned(done, call)
			return adbcerr.Ended(ctx, what, ErrAbandoned)
		}
	}
	if ctx.Err() != nil && (err != nil || !call.effect()) {
		call.orphan()
		err = adbcerr.Ended(ctx, what, err)
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
