package testsupport

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
)

// Prog hands out the bytes of a fuzz program; past its end it gives 0, so
// every input is a complete program.
type Prog struct {
	b []byte
	i int
}

// NewProg reads the program b.
func NewProg(b []byte) *Prog { return &Prog{b: b} }

// Byte returns the next byte, or 0 past the end.
func (r *Prog) Byte() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

// U16 returns the next two bytes, little-endian.
func (r *Prog) U16() int { return int(r.Byte()) | int(r.Byte())<<8 }

// Bytes returns the next n bytes (zero past the end).
func (r *Prog) Bytes(n int) []byte {
	out := make([]byte, 0, n)
	for range n {
		out = append(out, r.Byte())
	}
	return out
}

// Read is how many bytes of the program have been read.
func (r *Prog) Read() int { return r.i }

// NoPanic runs f and turns a panic into a test failure naming what.
func NoPanic(t testing.TB, what string, f func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s panicked: %v\n%s", what, p, debug.Stack())
		}
	}()
	f()
}

// WantSentinel fails t unless err wraps one of sentinels.
func WantSentinel(t testing.TB, what string, err error, sentinels ...error) {
	t.Helper()
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("%s: error %q wraps none of %v", what, err, sentinels)
}

// ReadValues reads every value of a, which passed full validation, and
// its string form, failing t on a panic.
func ReadValues(t testing.TB, a arrow.Array) {
	t.Helper()
	NoPanic(t, fmt.Sprintf("reading a validated %s of length %d", a.DataType(), a.Len()), func() {
		vals := a
		if ext, ok := a.(array.ExtensionArray); ok {
			vals = ext.Storage() // extension arrays have no ValueStr of their own
		}
		for i := range vals.Len() {
			_ = vals.ValueStr(i)
			_ = vals.IsNull(i)
		}
		// Not for empty arrays: arrow-go's DenseUnion.String panics on one
		// with a non-zero offset (RawValueOffsets slices an empty slice;
		// testdata/fuzz/FuzzImportArray/dense_union_empty_with_offset).
		if a.Len() > 0 {
			_ = a.String()
		}
	})
}

// ReadDeviceArray copies an imported device array to the host, validates
// it fully and reads every value, failing t on an error or a panic.
func ReadDeviceArray(t testing.TB, what string, da *cdevice.DeviceArray) {
	t.Helper()
	var arr arrow.Array
	NoPanic(t, "ToHost of "+what, func() {
		var err error
		if arr, err = da.ToHost(context.Background()); err != nil {
			t.Fatalf("ToHost of %s: %v", what, err)
		}
	})
	defer arr.Release()
	if err := cdevice.ValidateFull(arr); err != nil {
		t.Fatalf("%s (%s) is not valid: %v", what, arr.DataType(), err)
	}
	ReadValues(t, arr)
}
