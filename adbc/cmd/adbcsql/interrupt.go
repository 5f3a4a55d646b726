package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
)

// interrupts turns Ctrl-C (SIGINT) into the cancel of the statement
// running: the first cancels it (its context's cause errInterrupted); a
// second while it still runs exits at once. At the prompt the terminal
// is raw and Ctrl-C is a key, which the prompt reads.
type interrupts struct {
	sig       chan os.Signal
	mu        sync.Mutex
	cancel    context.CancelCauseFunc // the running statement's, or nil
	cancelled bool                    // it was cancelled already
}

// notifyInterrupts starts catching SIGINT.
func notifyInterrupts() *interrupts {
	i := &interrupts{sig: make(chan os.Signal, 2)}
	signal.Notify(i.sig, os.Interrupt)
	go i.loop()
	return i
}

func (i *interrupts) loop() {
	for range i.sig {
		i.mu.Lock()
		switch {
		case i.cancel == nil: // between statements, in cooked mode: nothing to cancel
			i.mu.Unlock()
			os.Exit(exitInterrupted)
		case i.cancelled:
			os.Exit(exitInterrupted)
		}
		i.cancel(errInterrupted)
		i.cancelled = true
		i.mu.Unlock()
	}
}

// statement is the context of a statement: Ctrl-C cancels it until done.
// A nil *interrupts (tests) gives a context nothing cancels.
func (i *interrupts) statement() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	if i == nil {
		return ctx, func() { cancel(nil) }
	}
	i.mu.Lock()
	i.cancel, i.cancelled = cancel, false
	i.mu.Unlock()
	return ctx, func() {
		i.mu.Lock()
		i.cancel = nil
		i.mu.Unlock()
		cancel(nil)
	}
}

func (i *interrupts) stop() {
	signal.Stop(i.sig)
	close(i.sig)
}
