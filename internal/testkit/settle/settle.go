// Package settle waits for what other threads finish in their own time:
// finalizers, a producer's goroutine, a runtime's thread.
package settle

import (
	"runtime"
	"time"
)

// SettleTime bounds Eventually. Finalizers of dropped values run on their own
// goroutine, whenever the scheduler gets to it: on a loaded machine (CI's
// race and qemu legs, Wine) that can take far longer than on an idle one, so
// a wait of a fixed number of short sleeps fails at random. The bound is
// paid only when the condition never holds, that is, when a test fails.
const SettleTime = 10 * time.Second

// Eventually reports whether cond holds, asking again after a garbage
// collection and a short sleep until it does or SettleTime has passed.
// Tests use it where a count depends on finalizers or on another thread
// finishing what it was told to: the answer depends on whether the
// condition comes true, not on how fast.
func Eventually(cond func() bool) bool {
	deadline := time.Now().Add(SettleTime)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
