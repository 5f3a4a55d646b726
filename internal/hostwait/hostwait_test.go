package hostwait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilBlocksWithoutDeadline(t *testing.T) {
	blocked := false
	err := Until(context.Background(), func() (bool, error) { t.Fatal("polled"); return false, nil },
		func() error { blocked = true; return nil })
	if err != nil || !blocked {
		t.Fatalf("err %v, blocked %v: want the blocking wait", err, blocked)
	}
}

func TestUntilPollsToCompletion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polls := 0
	err := Until(ctx, func() (bool, error) { polls++; return polls == 5, nil }, nil)
	if err != nil || polls != 5 {
		t.Fatalf("err %v after %d polls, want nil after 5", err, polls)
	}
}

func TestUntilReturnsPollError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bad := errors.New("event failed")
	if err := Until(ctx, func() (bool, error) { return false, bad }, nil); err != bad {
		t.Fatalf("err %v, want %v", err, bad)
	}
}

func TestUntilGivesUpWhenContextIsDone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Until(ctx, func() (bool, error) { return false, nil }, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
	// Promptly: well within a second of the deadline (no timing target).
	if d := time.Since(start); d > time.Second {
		t.Fatalf("returned after %v", d)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if err := Until(done, func() (bool, error) { t.Fatal("polled after cancel"); return true, nil }, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
