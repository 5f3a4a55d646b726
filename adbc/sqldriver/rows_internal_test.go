package sqldriver

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// A duration past time.Duration's ±292 years is an error, not the value
// its nanoseconds wrap to; one within it is exact.
func TestDurationOutOfRange(t *testing.T) {
	b := array.NewDurationBuilder(memory.DefaultAllocator, &arrow.DurationType{Unit: arrow.Second})
	defer b.Release()
	b.AppendValues([]arrow.Duration{1e10, -1e10, 3600}, nil)
	col := b.NewArray()
	defer col.Release()
	for i := range 2 {
		if v, err := valueAt(col, i); !errors.Is(err, adbcerr.InvalidData) {
			t.Errorf("row %d: %v, %v; want InvalidData", i, v, err)
		}
	}
	if v, err := valueAt(col, 2); err != nil || v != time.Hour {
		t.Errorf("3600 s: %v, %v", v, err)
	}
}
