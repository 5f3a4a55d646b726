package dlpack_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
)

// TestMain fails the test binary if anything exported or imported is still
// held when all tests are done: cdevice's counters (device arrays, handles,
// C allocations, callback panics), this package's (tensors exported and not
// deleted, tensors imported and not given back) and ffi's own.
func TestMain(m *testing.M) {
	cdevice.SetIdentityImports(false)
	code := m.Run()
	cdevice.TrimMemoryCache()
	if code == 0 {
		if msg := settledLeaks(); msg != "" {
			fmt.Fprintf(os.Stderr, "leak check failed: %s\n", msg)
			code = 1
		}
	}
	os.Exit(code)
}

func settledLeaks() string {
	for i := 0; ; i++ {
		runtime.GC()
		l, s := cdevice.LiveLeaks(), dlpack.Stats()
		panics, last := ffi.Panics()
		if l.Zero() && s.Exports == 0 && s.Imports == 0 && ffi.LiveHandles() == 0 && ffi.LiveAllocations() == 0 && panics == 0 {
			return ""
		}
		if i == 10 {
			return fmt.Sprintf("%s; dlpack exports=%d imports=%d; ffi handles=%d allocations=%d panics=%d %s",
				l, s.Exports, s.Imports, ffi.LiveHandles(), ffi.LiveAllocations(), panics, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
