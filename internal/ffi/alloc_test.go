package ffi

import (
	"sync"
	"testing"
	"unsafe"
)

// Blocks kept for reuse come back zeroed, 16-aligned, and counted, at
// every class boundary and beyond the classes.
func TestCallocReuseIsZeroed(t *testing.T) {
	for _, n := range []uintptr{0, 1, 63, 64, 65, 127, 128, 255, 256, 511, 512, 513, 4096} {
		live := LiveAllocations()
		for round := range 3 {
			p, err := Calloc(n)
			if err != nil {
				t.Fatal(err)
			}
			if uintptr(p)%16 != 0 {
				t.Errorf("Calloc(%d) = %p: not 16-aligned", n, p)
			}
			b := unsafe.Slice((*byte)(p), max(n, 1))
			for i, v := range b {
				if v != 0 {
					t.Fatalf("Calloc(%d), round %d: byte %d is %#x", n, round, i, v)
				}
			}
			for i := range b {
				b[i] = 0xff
			}
			if got := LiveAllocations(); got != live+1 {
				t.Errorf("Calloc(%d): %d live, want %d", n, got, live+1)
			}
			Free(p)
		}
		if got := LiveAllocations(); got != live {
			t.Errorf("after Free: %d live, want %d", got, live)
		}
	}
}

// A second Free of a kept block panics, as the C library would abort,
// rather than handing the block out twice.
func TestFreeTwicePanics(t *testing.T) {
	p, err := Calloc(24)
	if err != nil {
		t.Fatal(err)
	}
	Free(p)
	defer func() {
		if recover() == nil {
			t.Error("a second Free did not panic")
		}
		// The block is kept once: the next two Callocs differ.
		a, _ := Calloc(24)
		b, _ := Calloc(24)
		if a == b {
			t.Errorf("one block handed out twice: %p", a)
		}
		Free(a)
		Free(b)
	}()
	Free(p)
}

// At most keepPerClass blocks of a class are kept; the rest go back to C.
func TestKeptIsBounded(t *testing.T) {
	ps := make([]unsafe.Pointer, 2*keepPerClass)
	for i := range ps {
		var err error
		if ps[i], err = Calloc(200); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range ps {
		Free(p)
	}
	c := classOf(200)
	kept[c].mu.Lock()
	n := len(kept[c].blocks)
	kept[c].mu.Unlock()
	if n != keepPerClass {
		t.Errorf("%d blocks kept, want %d", n, keepPerClass)
	}
}

// Goroutines allocating and freeing at once never share a block (each
// writes its own mark and finds it intact); run with -race.
func TestCallocConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []unsafe.Pointer
			for i := range 2000 {
				n := uintptr(8 + (i*37+g*11)%600)
				p, err := Calloc(n)
				if err != nil {
					t.Error(err)
					return
				}
				*(*uint64)(p) = uint64(g)<<32 | uint64(i)
				held = append(held, p)
				if len(held) > 16 {
					q := held[0]
					held = held[1:]
					if v := *(*uint64)(q); v>>32 != uint64(g) {
						t.Errorf("goroutine %d's block holds another's mark %#x", g, v)
					}
					Free(q)
				}
			}
			for _, q := range held {
				Free(q)
			}
		}()
	}
	wg.Wait()
}
