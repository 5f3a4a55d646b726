package cdevice_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/identity"
)

// withIdentity runs f with identity imports on (TestMain turns them off).
func withIdentity(t *testing.T, f func()) {
	t.Helper()
	defer identity.Set(identity.Set(true))
	f()
}

func TestIdentityImportReturnsTheExport(t *testing.T) {
	withIdentity(t, func() {
		rec := wideBatch(t)
		got, arr, sch := roundTrip(t, rec)
		defer got.Release()
		if got != rec {
			t.Error("an untouched Go export did not come back as itself")
		}
		if !arr.Released() || !sch.Released() {
			t.Error("identity import left its input unreleased")
		}
		if l := cdevice.LiveLeaks(); l.Exports() != 0 {
			t.Errorf("the export is still live after an identity import: %s", l)
		}
	})
}

// A consumer that moved a child out has changed the tree: the import must
// take the full path (and here fail, since the child is gone).
func TestIdentityImportSkipsModifiedTrees(t *testing.T) {
	withIdentity(t, func() {
		rec := wideBatch(t)
		arr, sch := offHeap[abi.Array](t), offHeap[abi.Schema](t)
		if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
			t.Fatal(err)
		}
		moved := offHeap[abi.Array](t)
		*moved = *arr.Child(0)
		arr.Child(0).Release = 0
		got, err := cdevice.ImportRecordBatch(arr, sch)
		if err == nil {
			got.Release()
			t.Fatal("import of a tree whose child was moved out succeeded")
		}
		col, err := cdevice.ImportArrayWithType(moved, rec.Schema().Field(0).Type)
		if err != nil {
			t.Fatal(err)
		}
		defer col.Release()
		if !array.Equal(col, rec.Column(0)) {
			t.Errorf("moved-out child: got %v want %v", col, rec.Column(0))
		}
	})
}

// Importing with another type than the exported one takes the full path.
func TestIdentityImportChecksType(t *testing.T) {
	withIdentity(t, func() {
		b := array.NewInt32Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues([]int32{1, -2, 3}, nil)
		a := b.NewArray()
		defer a.Release()
		ca := offHeap[abi.Array](t)
		if err := cdevice.ExportArray(a, ca, nil); err != nil {
			t.Fatal(err)
		}
		got, err := cdevice.ImportArrayWithType(ca, arrow.FixedWidthTypes.Date32)
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		if got == a || got.DataType().ID() != arrow.DATE32 || got.(*array.Date32).Value(1) != -2 {
			t.Errorf("got %v (%s), want the int32 values as date32", got, got.DataType())
		}
	})
}
