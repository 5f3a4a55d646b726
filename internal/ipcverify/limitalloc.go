package ipcverify

import (
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ErrMemoryLimit: reading input needed more memory than its limit allows.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// A limitedAllocator is an arrow memory.Allocator that holds at most limit
// bytes at once, and hands out at most total bytes in all (the data a
// reading produces: decompressed buffers, bodies, dictionaries as deltas
// accumulate). arrow-go sizes allocations from lengths written in a file;
// a corrupt length must be refused before Go tries to allocate it (which
// ends the process, beyond any recover). memory.Allocator has no error
// return, so a refusal panics with an error wrapping ErrMemoryLimit, also
// kept for Err: arrow-go's readers recover some panics into errors of
// their own, which lose the cause.
type limitedAllocator struct {
	mem          memory.Allocator
	limit, total int64

	mu           sync.Mutex
	used, handed int64
	err          error // the first refusal
}

func newLimitedAllocator(mem memory.Allocator, limit, total int64) *limitedAllocator {
	return &limitedAllocator{mem: mem, limit: limit, total: total}
}

func (a *limitedAllocator) Allocate(size int) []byte {
	a.reserve(int64(size), size)
	return a.mem.Allocate(size)
}

func (a *limitedAllocator) Reallocate(size int, b []byte) []byte {
	a.reserve(int64(size)-int64(len(b)), size)
	return a.mem.Reallocate(size, b)
}

func (a *limitedAllocator) Free(b []byte) {
	a.mu.Lock()
	a.used -= int64(len(b))
	a.mu.Unlock()
	a.mem.Free(b)
}

// reserve accounts for delta more bytes in an allocation of size bytes, or
// panics when that takes the total past the limit.
func (a *limitedAllocator) reserve(delta int64, size int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	switch {
	case size < 0 || a.used+delta > a.limit:
		err = fmt.Errorf("%w: an allocation of %d bytes with %d held would pass the limit of %d bytes", ErrMemoryLimit, size, a.used, a.limit)
	case delta > 0 && a.handed+delta > a.total:
		err = fmt.Errorf("%w: an allocation of %d bytes would take the data read past %d bytes in all (--max-data)", ErrDataLimit, size, a.total)
	}
	if err != nil {
		if a.err == nil {
			a.err = err
		}
		panic(err)
	}
	a.used += delta
	a.handed += max(delta, 0)
}

// Err returns the first refusal, nil when there was none.
func (a *limitedAllocator) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}
