package cdevice_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/purearrow/cdevice"
)

// TestMain fails the test binary if anything exported or imported across the
// C boundary is still held when all tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaks := settledLeaks(); !leaks.Zero() {
			fmt.Fprintf(os.Stderr, "leak check failed: %s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}

// settledLeaks lets finalizers of dropped arrow-go values run before reading
// the counters.
func settledLeaks() cdevice.Leaks {
	var l cdevice.Leaks
	for range 10 {
		runtime.GC()
		if l = cdevice.LiveLeaks(); l.Zero() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return l
}
