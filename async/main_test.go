package async_test

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
// Identity imports (a batch we exported read back directly) are off by
// default here so every round trip drives the C path; tests that want them
// turn them on (forEachIdentity).
func TestMain(m *testing.M) {
	cdevice.SetIdentityImports(false)
	code := m.Run()
	cdevice.TrimMemoryCache() // cached blocks are not leaks, but give them back
	if code == 0 {
		if leaks := finalLeaks(); !leaks.Zero() {
			fmt.Fprintf(os.Stderr, "leak check failed: %s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}

// finalLeaks lets finalizers of dropped arrow-go values run before reading
// the counters.
func finalLeaks() cdevice.Leaks {
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
