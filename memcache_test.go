package cdevice_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
)

// Freed device memory is reused by the next copy of the same size, kept
// within the limit, and freed by TrimMemoryCache.
func TestMemoryCache(t *testing.T) {
	ctx := context.Background()
	cdevice.TrimMemoryCache()
	a := int64Array(t, 1<<16) // 512 KiB, no validity: one buffer
	copyOnce := func() {
		t.Helper()
		da, err := cdevice.CopyToDevice(ctx, a, counting)
		if err != nil {
			t.Fatal(err)
		}
		h, err := da.ToHost(ctx)
		da.Release()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(a, h) {
			t.Fatal("values differ")
		}
		h.Release()
	}
	allocs0, frees0 := counting.allocs.Load(), counting.frees.Load()
	copyOnce()
	if got := cdevice.CachedMemory(counting); got != 8<<16 {
		t.Errorf("cached %d bytes after release, want %d", got, 8<<16)
	}
	if got := cdevice.CachedMemory(nil); got < 8<<16 {
		t.Errorf("host cache holds %d bytes, want the ToHost buffer (%d)", got, 8<<16)
	}
	copyOnce()
	if n := counting.allocs.Load() - allocs0; n != 1 {
		t.Errorf("two copies allocated %d times, want 1 (the second reuses the block)", n)
	}
	cdevice.TrimMemoryCache()
	if n := counting.frees.Load() - frees0; n != 1 || cdevice.CachedMemory(counting) != 0 {
		t.Errorf("after trim: %d frees, %d bytes cached", n, cdevice.CachedMemory(counting))
	}

	// Over the limit, released memory is freed at once.
	old := cdevice.SetMemoryCacheLimit(1024)
	defer cdevice.SetMemoryCacheLimit(old)
	frees1 := counting.frees.Load()
	copyOnce()
	if n := counting.frees.Load() - frees1; n != 1 || cdevice.CachedMemory(counting) != 0 {
		t.Errorf("over the limit: %d frees, %d bytes cached", n, cdevice.CachedMemory(counting))
	}
}
