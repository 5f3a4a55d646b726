package async_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used so far, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var creation, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err == nil {
		err = syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user)
	}
	if err != nil {
		tb.Fatalf("GetProcessTimes: %v", err)
	}
	// Filetimes here are durations in 100ns units, not dates.
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
