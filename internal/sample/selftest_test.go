package sample

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The sample's decimals hold the values their JSON says on every word size
// (arrow-go's own parser panics or builds wrong values on 386 and arm). The
// expected limbs were computed with Python's integers.
func TestSampleDecimals(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec, err := Batch(mem, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var d128 *array.Decimal128
	var d256 *array.Decimal256
	for i, f := range rec.Schema().Fields() {
		switch f.Name {
		case "decimal128":
			d128 = rec.Column(i).(*array.Decimal128)
		case "decimal256":
			d256 = rec.Column(i).(*array.Decimal256)
		}
	}
	for _, c := range []struct {
		i    int
		want decimal128.Num
	}{
		{0, decimal128.New(0x0949b0f6f0023313, 0xc449904ecc674515)}, // 1234567890123456789012345678.0123456789
		{1, decimal128.New(-1, 0xfffffffc81ee2a00)},                 // -1.5
		{2, decimal128.Num{}},
	} {
		if got := d128.Value(c.i); got != c.want {
			t.Errorf("decimal128[%d] = %#x %#x, want %#x %#x", c.i, got.HighBits(), got.LowBits(), c.want.HighBits(), c.want.LowBits())
		}
	}
	if !d128.IsNull(4) || !d256.IsNull(5) {
		t.Error("the nulls of the decimal columns are lost")
	}
	for _, c := range []struct {
		i    int
		want decimal256.Num
	}{
		{0, decimal256.New(0x2dcaec4c2d, 0xf4268937664439ba, 0x2f162fc2d76998cb, 0xaccff196ce3f0ad2)}, // 12345…890.12345678901234567890
		{1, decimal256.New(^uint64(0), ^uint64(0), 0xfffffffffffffff7, 0xde54f2bbeb680000)},           // -1.5
		{2, decimal256.Num{}},
	} {
		if got := d256.Value(c.i); got != c.want {
			t.Errorf("decimal256[%d] = %v, want %v", c.i, got.Array(), c.want.Array())
		}
	}
}

func TestDecimalLimbsErrors(t *testing.T) {
	for _, s := range []string{"abc", "1.234", "1e100", "1000"} {
		if l, err := decimalLimbs(s, 3, 2, 16); err == nil {
			t.Errorf("decimalLimbs(%q, 3, 2) = %x; want an error", s, l)
		}
	}
}

// The sample's extension arrays implement the whole arrow.Array
// interface: ValueStr reads the storage.
func TestSampleExtensionValueStr(t *testing.T) {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues([]string{"a", "b"}, []bool{true, false})
	storage := b.NewArray()
	b.Release()
	defer storage.Release()
	ext := array.NewExtensionArrayWithStorage(labelType, storage)
	defer ext.Release()
	if got := []string{ext.ValueStr(0), ext.ValueStr(1)}; got[0] != "a" || got[1] != array.NullValueStr {
		t.Errorf("ValueStr = %q", got)
	}
}

// Batches are the sample, a slice of it, 504 rows, none and nulls only,
// all of the sample's schema; releasing them frees all their memory.
func TestBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batches, err := Batches(mem)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Batch(mem, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	var rows []int64
	for _, b := range batches {
		rows = append(rows, b.NumRows())
		if !b.Schema().Equal(want.Schema()) || !b.Schema().Metadata().Equal(want.Schema().Metadata()) {
			t.Errorf("batch of %d rows: schema %s", b.NumRows(), b.Schema())
		}
	}
	if !slices.Equal(rows, []int64{Rows, Rows - 2, 504, 0, 5}) {
		t.Errorf("batch rows %v", rows)
	}
	if !array.RecordEqual(batches[0], want) {
		t.Error("the first batch is not the sample")
	}
	for _, b := range batches {
		b.Release()
	}
}
