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
//
// Imports of our own untouched exports would return the exported value
// itself; tests turn that off so every round trip drives the full import
// path, and turn it on where they test it (identity_test.go).
func TestMain(m *testing.M) {
	cdevice.SetIdentityImports(false)
	code := m.Run()
	cdevice.TrimMemoryCache() // cached blocks are not leaks, but give them back
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
