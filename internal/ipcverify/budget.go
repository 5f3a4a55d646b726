package ipcverify

import (
	"errors"
	"fmt"
	"math"
)

// What reading one input may cost in all, not only per allocation: a
// small file can list the same block again and again, or hold compressed
// buffers that expand a thousandfold, and each batch is validated and
// exported through C.
var (
	// ErrDataLimit: the batches would produce more data in all than
	// --max-data allows.
	ErrDataLimit = errors.New("data limit exceeded")
	// ErrBatchLimit: more batches than --max-batches allows.
	ErrBatchLimit = errors.New("batch limit exceeded")
	// ErrNotArrow: the input is neither an Arrow IPC file nor a stream.
	// (Its text, and ErrNotFile's, follow the input's name.)
	ErrNotArrow = errors.New("is not an Arrow IPC file or stream")
	// ErrNotFile: the input starts with a file's magic, and is none.
	ErrNotFile = errors.New("starts like an Arrow IPC file but cannot be read as one")
)

// MaxSchemaDepth bounds the nesting of a schema's fields, as a careful C
// consumer bounds its walk.
const MaxSchemaDepth = 64

// DefaultBatches is --max-batches unless given.
const DefaultBatches = 1_000_000

// DefaultData is --max-data for a file of size bytes unless given: 64
// MiB, and 64 times the file (compressed data rarely expands more; what
// does needs the flag).
func DefaultData(size int64) int64 { return sat(64<<20, 64, size) }

// DefaultMemory is what reading a file of size bytes may hold at once
// unless --max-memory says otherwise: a batch's buffers are in the file, so
// without compression they need at most its size; a compressed one may
// expand, up to 16 times here, or 64 MiB for small files. Lengths beyond
// that are corrupt (or call for --max-memory).
func DefaultMemory(size int64) int64 { return sat(64<<20, 16, size) }

// sat is base + k*size, saturating at MaxInt64.
func sat(base, k, size int64) int64 {
	if size > (math.MaxInt64-base)/k {
		return math.MaxInt64
	}
	return base + k*size
}

// A budget is what reading one input may still spend: checkFile and
// checkStream spend it from the metadata and the compressed buffers'
// headers before arrow-go reads anything, so that an input over a limit is
// refused after work bounded by its size; the allocator holds arrow-go to
// the same limits as it reads.
type budget struct {
	Limits // (--max-memory, --max-data, --max-batches)

	dataUsed, batchesUsed int64
	workUsed              int64 // what validating and exporting batches read (spendWork)
}

// spendData counts n bytes of batch data (what, for the error).
func (b *budget) spendData(n int64, what string) error {
	if n > b.Data-b.dataUsed {
		return fmt.Errorf("%w: %s would take the batches' data past %d bytes in all (--max-data)", ErrDataLimit, what, b.Data)
	}
	b.dataUsed += n
	return nil
}

// spendWork counts n bytes that validating and exporting a batch read,
// against the same limit as the data, on a count of its own: a body's
// bytes were counted as data already, and are read again only where
// buffers overlap.
func (b *budget) spendWork(n int64, what string) error {
	if n > b.Data-b.workUsed {
		return fmt.Errorf("%w: %s would take what is read of the batches past %d bytes in all (--max-data)", ErrDataLimit, what, b.Data)
	}
	b.workUsed += n
	return nil
}

// spendBatch counts one more batch.
func (b *budget) spendBatch() error {
	if b.batchesUsed >= b.Batches {
		return fmt.Errorf("%w: more than %d batches (--max-batches)", ErrBatchLimit, b.Batches)
	}
	b.batchesUsed++
	return nil
}

// decoderCap bounds what a decompressor may keep besides the buffer it
// fills (a ZSTD window, an LZ4 block), which no allocator of ours sees: a
// quarter of --max-memory.
func (b *budget) decoderCap() int64 { return b.Memory / 4 }
