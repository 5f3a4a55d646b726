//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of this process so far, all
// its threads (the Go runtime's and a driver's own) together.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
