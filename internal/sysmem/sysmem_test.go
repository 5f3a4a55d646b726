package sysmem_test

import (
	"runtime"
	"testing"

	"github.com/purearrow/cdevice/internal/sysmem"
)

// Allows takes what the machine has and refuses what no machine has (past
// 2^48 bytes) and negative sizes; where the platform says how much memory
// is available (Linux, macOS, Windows), it is said and bounds the rest.
func TestAllows(t *testing.T) {
	avail, known := sysmem.Available()
	t.Logf("available: %d bytes (known %v)", avail, known)
	switch runtime.GOOS {
	case "linux", "darwin", "windows":
		if !known || avail <= 0 {
			t.Errorf("Available on %s: %d, %v", runtime.GOOS, avail, known)
		}
	}
	limit, ok := sysmem.Allows(1 << 20)
	if !ok || limit < 1<<20 {
		t.Errorf("Allows(1 MiB): limit %d, %v", limit, ok)
	}
	if known && limit > avail/2 {
		t.Errorf("limit %d is more than half of the %d available", limit, avail)
	}
	for _, n := range []int64{-1, 1<<48 + 1, limit + 1} {
		if _, ok := sysmem.Allows(n); ok {
			t.Errorf("Allows(%d): true", n)
		}
	}
}
