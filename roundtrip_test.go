package cdevice_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
)

func TestRoundTripSmoke(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, []bool{true, false, true})
	a := b.NewArray()
	defer a.Release()
	ca, cs := cdevice.New[abi.Array](), cdevice.New[abi.Schema]()
	defer cdevice.Free(ca)
	defer cdevice.Free(cs)
	if err := cdevice.ExportArray(a, ca, cs); err != nil {
		t.Fatal(err)
	}
	got, err := cdevice.ImportArray(ca, cs)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.Equal(a, got) {
		t.Fatalf("got %v want %v", got, a)
	}
	if !ca.Released() || !cs.Released() {
		t.Fatal("import must take ownership")
	}
	_ = arrow.PrimitiveTypes.Int64
}
