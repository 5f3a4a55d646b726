package cai

import (
	"fmt"
	"math"

	"github.com/purearrow/cdevice"
)

// Sentinel errors. Every error of this package wraps one of them (or an
// error of package cdevice or device), so callers can test with errors.Is.
var (
	// ErrInvalid: a descriptor breaks the interface's rules (a missing or
	// malformed entry, stream 0, a mask of another shape, an array whose
	// buffers are too small for what it says). It wraps cdevice.ErrInvalid.
	ErrInvalid = fmt.Errorf("cai: invalid CUDA Array Interface: %w", cdevice.ErrInvalid)
	// ErrUnsupported: a valid descriptor or array this package does not
	// convert (complex numbers, big-endian data, structured types, an
	// Arrow type with no typestr, strided data when no copy was allowed).
	// It wraps cdevice.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("cai: %w", cdevice.ErrUnsupported)
	// ErrNotCUDA: the array or device is not CUDA memory. The CUDA Array
	// Interface describes memory of the CUDA family only: device types
	// CUDA, CUDA_HOST and CUDA_MANAGED. It wraps ErrUnsupported.
	ErrNotCUDA = fmt.Errorf("%w: the CUDA Array Interface describes CUDA memory only", ErrUnsupported)
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Version is the version of the interface this package writes.
const Version = 3

// Values of Interface.Stream with a meaning of their own (0 is disallowed).
const (
	// StreamLegacy is CUDA's legacy default stream.
	StreamLegacy int64 = 1
	// StreamPerThread is CUDA's per-thread default stream.
	StreamPerThread int64 = 2
)

// An Interface is a CUDA Array Interface (version 3) descriptor: what
// Python's __cuda_array_interface__ returns. It describes memory and owns
// none: the memory must stay alive while the descriptor is used (see Export
// and Import). Its JSON form (MarshalJSON) is exactly that dictionary.
type Interface struct {
	// Shape is the size of each dimension.
	Shape []int64
	// Typestr is the element type as NumPy's array interface writes it:
	// byte order ('<', '>' or '|'), kind and size in bytes, e.g. "<f8".
	Typestr string
	// Data is the device pointer of the first element (0 for an array of
	// no elements) and whether the memory is read-only.
	Data Data
	// Version is the interface's version: 3 (Version).
	Version int
	// Strides are the bytes between consecutive elements of each
	// dimension; nil for C-contiguous (row-major) layout.
	Strides []int64
	// Descr describes structured types as (name, typestr) fields; nil when
	// absent. For a plain type it is one unnamed field of Typestr.
	Descr []Field
	// Mask, when not nil, is an array of the same shape of one-byte
	// elements ("|b1", "|u1" or "|i1"): an element is valid where the mask
	// is non-zero (true), null where it is zero, as the interface defines
	// it (the opposite of numpy.ma's masks).
	Mask *Interface
	// Stream is the stream the producer's work on the data may still be
	// pending on: nil when no synchronization is needed, StreamLegacy,
	// StreamPerThread, or a cudaStream_t. 0 is disallowed.
	Stream *int64
}

// Data is the "data" entry: (pointer, read-only).
type Data struct {
	Ptr      uintptr
	ReadOnly bool
}

// A Field is one (name, typestr) entry of Descr.
type Field struct {
	Name    string
	Typestr string
}

// A StreamKind is what Interface.Stream names.
type StreamKind int

const (
	// NoStream: Stream is nil; the data may be used at once, on any stream.
	NoStream StreamKind = iota
	// LegacyStream: Stream is 1, CUDA's legacy default stream.
	LegacyStream
	// PerThreadStream: Stream is 2, CUDA's per-thread default stream.
	PerThreadStream
	// HandleStream: Stream is any other positive value, a cudaStream_t.
	HandleStream
)

func (k StreamKind) String() string {
	switch k {
	case NoStream:
		return "none"
	case LegacyStream:
		return "legacy default stream"
	case PerThreadStream:
		return "per-thread default stream"
	case HandleStream:
		return "cudaStream_t"
	}
	return fmt.Sprintf("StreamKind(%d)", int(k))
}

// StreamKind reads the v3 stream rules: nil is no stream, 1 the legacy
// default stream, 2 the per-thread default stream, any other positive value
// a cudaStream_t. 0 is refused as the interface disallows it (it could mean
// no stream, the legacy or the per-thread default stream), and so is a
// negative value. Descriptors of versions before 3 have no stream.
func (d *Interface) StreamKind() (StreamKind, error) {
	if d == nil {
		return NoStream, invalidf("nil descriptor")
	}
	if d.Stream == nil {
		return NoStream, nil
	}
	if d.Version < 3 {
		return NoStream, invalidf("a version %d descriptor has a stream (streams came with version 3)", d.Version)
	}
	switch s := *d.Stream; {
	case s == 0:
		return NoStream, invalidf("stream 0 is disallowed: it is ambiguous between no stream, the legacy and the per-thread default stream (use nil, 1 or 2)")
	case s < 0:
		return NoStream, invalidf("stream %d is negative", s)
	case s == StreamLegacy:
		return LegacyStream, nil
	case s == StreamPerThread:
		return PerThreadStream, nil
	}
	return HandleStream, nil
}

// Len is the number of elements: the product of Shape (1 for no
// dimensions).
func (d *Interface) Len() int64 {
	n := int64(1)
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// Validate checks the descriptor against the interface's rules, and its
// mask's: version 0 to 3, non-negative shape whose byte size fits in an
// int64, a well-formed typestr, a non-NULL pointer unless there are no
// elements, strides (when given) one per dimension, well-formed descr
// typestrs, a mask of the same shape with one-byte elements and no mask of
// its own, and the stream rules (see StreamKind). Errors wrap ErrInvalid,
// or ErrUnsupported for a version after 3.
func (d *Interface) Validate() error { return d.validate("") }

func (d *Interface) validate(what string) error {
	if d == nil {
		return invalidf("nil descriptor")
	}
	if what != "" {
		what += ": "
	}
	if d.Version < 0 {
		return invalidf("%sversion %d", what, d.Version)
	}
	if d.Version > Version {
		return unsupportedf("%sversion %d (this package knows versions up to %d)", what, d.Version, Version)
	}
	t, err := parseTypestr(d.Typestr)
	if err != nil {
		return fmt.Errorf("%s%w", what, err)
	}
	n := int64(1)
	for i, s := range d.Shape {
		if s < 0 {
			return invalidf("%sshape[%d] is %d", what, i, s)
		}
		if s != 0 && n > math.MaxInt64/s {
			return invalidf("%sshape %v has too many elements", what, d.Shape)
		}
		n *= s
	}
	if t.size > 0 && n > math.MaxInt64/int64(t.size) {
		return invalidf("%sshape %v of %d-byte elements overflows", what, d.Shape, t.size)
	}
	if n > 0 && d.Data.Ptr == 0 {
		return invalidf("%sdata pointer is NULL for %d elements", what, n)
	}
	if d.Strides != nil && len(d.Strides) != len(d.Shape) {
		return invalidf("%s%d strides for %d dimensions", what, len(d.Strides), len(d.Shape))
	}
	for i, f := range d.Descr {
		if _, err := parseTypestr(f.Typestr); err != nil {
			return fmt.Errorf("%sdescr[%d] (%q): %w", what, i, f.Name, err)
		}
	}
	if _, err := d.StreamKind(); err != nil {
		return fmt.Errorf("%s%w", what, err)
	}
	if m := d.Mask; m != nil {
		if err := m.validate(what + "mask"); err != nil {
			return err
		}
		if m.Mask != nil {
			return invalidf("%sthe mask has a mask of its own", what)
		}
		mt, _ := parseTypestr(m.Typestr)
		if mt.size != 1 || (mt.kind != 'b' && mt.kind != 'u' && mt.kind != 'i') {
			return invalidf("%smask typestr %q: a mask has one-byte elements (|b1 or |u1)", what, m.Typestr)
		}
		if !equalInts(m.Shape, d.Shape) {
			return invalidf("%smask shape %v differs from shape %v", what, m.Shape, d.Shape)
		}
	}
	return nil
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
