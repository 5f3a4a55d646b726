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

// BenchmarkValueAt reads an int64, a string and a timestamp column value
// by value, as rows' Next does for every cell (its reader found once a
// batch).
func BenchmarkValueAt(b *testing.B) {
	mem := memory.DefaultAllocator
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	for i := range 1024 {
		ib.Append(int64(i))
		sb.Append("value")
		tb.Append(arrow.Timestamp(i))
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), tb.NewArray()}
	for _, c := range cols {
		defer c.Release()
	}
	for b.Loop() {
		reads := []cellReader{readerOf(cols[0]), readerOf(cols[1]), readerOf(cols[2])}
		for i := range 1024 {
			for j, c := range cols {
				if c.IsNull(i) {
					continue
				}
				if _, err := reads[j](c, i); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
