// Package cmeta is the C Data Interface's metadata encoding (ArrowSchema.
// metadata, ArrowAsyncProducer.additional_metadata, task metadata): the
// bridge, the async package and the command encode and decode with it.
package cmeta

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/errs"
)

// Limits on metadata from C: beyond them the blob is taken as corrupt
// rather than trusted with a huge read or allocation.
const (
	maxMetadataBytes = 1 << 31
	maxMetadataPairs = 1 << 20
)

// Encode encodes md in the C Data Interface layout: int32 pair count,
// then per pair int32 key length, key bytes, int32 value length, value bytes,
// all native-endian. It returns nil when md is empty.
func Encode(md arrow.Metadata) []byte {
	if md.Len() == 0 {
		return nil
	}
	keys, vals := md.Keys(), md.Values()
	size := 4
	for i := range keys {
		size += 8 + len(keys[i]) + len(vals[i])
	}
	b := make([]byte, 0, size)
	b = binary.NativeEndian.AppendUint32(b, uint32(len(keys)))
	for i := range keys {
		b = binary.NativeEndian.AppendUint32(b, uint32(len(keys[i])))
		b = append(b, keys[i]...)
		b = binary.NativeEndian.AppendUint32(b, uint32(len(vals[i])))
		b = append(b, vals[i]...)
	}
	return b
}

// Decode decodes the C metadata blob at address p (0: none) into Go
// memory. Counts and lengths are checked before each read, so a hostile
// blob gets an error, not a huge allocation; it cannot protect against a
// blob shorter than its own lengths claim.
func Decode(p uintptr) (arrow.Metadata, error) {
	var keys, vals []string
	_, err := parse(p, func(n int) {
		// Grow as pairs are read: the count alone is not proof the bytes exist.
		keys, vals = make([]string, 0, min(n, 64)), make([]string, 0, min(n, 64))
	}, func(k, v []byte) {
		keys, vals = append(keys, string(k)), append(vals, string(v)) // copies into Go memory
	})
	if err != nil || len(keys) == 0 {
		return arrow.Metadata{}, err
	}
	return arrow.NewMetadata(keys, vals), nil
}

// Blob returns the C metadata blob at address p (0: none, nil) in place,
// checked as Decode checks it, without copying: a view valid while the C
// memory is.
func Blob(p uintptr) ([]byte, error) {
	n, err := parse(p, nil, nil)
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*byte)(abi.Pointer(p)), n), nil
}

// parse checks the blob at p, calling start with the pair count and each
// for every pair (both may be nil), and returns its size in bytes.
func parse(p uintptr, start func(n int), each func(k, v []byte)) (int, error) {
	if p == 0 {
		return 0, nil
	}
	var off uint64 // bytes consumed so far, never above maxMetadataBytes
	// take returns the next n bytes, or nil after checking they would pass the cap
	// or wrap the address space (possible on 32-bit).
	take := func(n uint64) []byte {
		if off+n > maxMetadataBytes || off+n > uint64(^uintptr(0)-p) {
			return nil
		}
		b := unsafe.Slice((*byte)(abi.Pointer(p+uintptr(off))), int(n))
		off += n
		return b
	}
	readLen := func(what string) (int, error) {
		b := take(4)
		if b == nil {
			return 0, invalidf("truncated at %s", what)
		}
		n := int32(binary.NativeEndian.Uint32(b))
		if n < 0 {
			return 0, invalidf("negative %s %d", what, n)
		}
		return int(n), nil
	}
	readStr := func(what string) ([]byte, error) {
		n, err := readLen(what + " length")
		if err != nil {
			return nil, err
		}
		b := take(uint64(n))
		if b == nil {
			return nil, invalidf("%s length %d exceeds %d bytes in all", what, n, int64(maxMetadataBytes))
		}
		return b, nil
	}

	n, err := readLen("pair count")
	if err != nil {
		return 0, err
	}
	if n > maxMetadataPairs {
		return 0, invalidf("%d pairs exceeds %d", n, maxMetadataPairs)
	}
	if start != nil && n > 0 {
		start(n)
	}
	for range n {
		k, err := readStr("key")
		if err != nil {
			return 0, err
		}
		v, err := readStr("value")
		if err != nil {
			return 0, err
		}
		if each != nil {
			each(k, v)
		}
	}
	return int(off), nil
}

// invalidf is an error wrapping errs.ErrInvalid (cdevice.ErrInvalid).
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: metadata: %s", errs.ErrInvalid, fmt.Sprintf(format, args...))
}
