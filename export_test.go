package cdevice_test

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Export (export.go) to C consumers in testdata/c/cdata.c, and export
// properties C can observe.

func TestExportToCInt32(t *testing.T) {
	for _, withNulls := range []bool{false, true} {
		t.Run(fmt.Sprintf("nulls=%v", withNulls), func(t *testing.T) {
			before := cdevice.LiveLeaks().Exports()
			s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
			arr := wantInt32(100, withNulls)
			err := cdevice.ExportArray(arr, a, s)
			arr.Release() // the export holds its own reference
			if err != nil {
				t.Fatalf("ExportArray: %v", err)
			}
			if rc := ccall(t, "ct_check_int32", addr(s), addr(a), 100, boolArg(withNulls)); rc != 0 {
				t.Errorf("ct_check_int32: %d: %s", rc, cLastError(t))
			}
			checkExportsReleased(t, before)
		})
	}
}

func TestExportToCUTF8(t *testing.T) {
	before := cdevice.LiveLeaks().Exports()
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	arr := wantUTF8(57)
	err := cdevice.ExportArray(arr, a, s)
	arr.Release()
	if err != nil {
		t.Fatalf("ExportArray: %v", err)
	}
	if rc := ccall(t, "ct_check_utf8", addr(s), addr(a), 57); rc != 0 {
		t.Errorf("ct_check_utf8: %d: %s", rc, cLastError(t))
	}
	checkExportsReleased(t, before)
}

func TestExportToCRecordBatch(t *testing.T) {
	const n = 41
	before := cdevice.LiveLeaks().Exports()
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	rb := wantRecordBatch(n)
	err := cdevice.ExportRecordBatch(rb, a, s)
	rb.Release()
	if err != nil {
		t.Fatalf("ExportRecordBatch: %v", err)
	}
	cols, _ := ffi.CString(recordColumns)
	defer ffi.Free(cols)
	if rc := ccall(t, "ct_check_record_batch", addr(s), addr(a), uintptr(cols), n); rc != 0 {
		t.Errorf("ct_check_record_batch: %d: %s", rc, cLastError(t))
	}
	checkExportsReleased(t, before)
}

func TestExportToCDeviceArray(t *testing.T) {
	before := cdevice.LiveLeaks().Exports()
	s, da := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.DeviceArray](t)
	arr := wantInt32(10, true)
	err := cdevice.ExportDeviceArray(arr, da, s)
	arr.Release()
	if err != nil {
		t.Fatalf("ExportDeviceArray: %v", err)
	}
	if rc := ccall(t, "ct_check_device_array_cpu", addr(s), addr(da), 10, 1); rc != 0 {
		t.Errorf("ct_check_device_array_cpu: %d: %s", rc, cLastError(t))
	}
	checkExportsReleased(t, before)
}

// TestExportMoveChild: C moves a child out of an exported parent, releases
// the parent, and the child must still be readable, then released alone.
func TestExportMoveChild(t *testing.T) {
	cases := []struct {
		name  string
		build func() arrow.Array
		child int
		sum   int64
	}{
		// struct child a: value i, null when i is odd
		{"struct", func() arrow.Array { return wantStruct(10) }, 0, 0 + 2 + 4 + 6 + 8},
		// record batch column ints: value i*3, null when i%3 == 2
		{"record_batch", func() arrow.Array { return wantRecordBatchArray(7) }, 0, 0 + 3 + 9 + 12 + 18},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := cdevice.LiveLeaks().Exports()
			a, out := testsupport.OffHeap[abi.Array](t), testsupport.OffHeap[abi.Array](t)
			sum := testsupport.OffHeap[abi.Array](t) // C memory for the int64 out-param
			arr := c.build()
			err := cdevice.ExportArray(arr, a, nil)
			arr.Release()
			if err != nil {
				t.Fatalf("ExportArray: %v", err)
			}
			if rc := ccall(t, "ct_move_child_and_release", addr(a), uintptr(c.child), addr(out), addr(sum)); rc != 0 {
				t.Fatalf("ct_move_child_and_release: %d: %s", rc, cLastError(t))
			}
			if got := *(*int64)(unsafe.Pointer(sum)); got != c.sum {
				t.Errorf("sum of the moved child %d, want %d", got, c.sum)
			}
			checkExportsReleased(t, before)
		})
	}
}

func TestExportFieldKeepsNameAndFlags(t *testing.T) {
	f := arrow.Field{Name: "price", Type: &arrow.Decimal128Type{Precision: 20, Scale: 4}, Nullable: false,
		Metadata: arrow.NewMetadata([]string{"unit"}, []string{"EUR"})}
	s := offHeap[abi.Schema](t)
	if err := cdevice.ExportField(f, s); err != nil {
		t.Fatal(err)
	}
	got, err := cdevice.ImportField(s)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(f) {
		t.Errorf("got %v, want %v", got, f)
	}
}

// Exports of one schema from many goroutines share its cached plan.
func TestExportSchemaConcurrent(t *testing.T) {
	sc := wideBatch(t).Schema()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				s := cdevice.New[abi.Schema]()
				if err := cdevice.ExportSchema(sc, s); err != nil {
					t.Error(err)
				}
				got, err := cdevice.ImportSchema(s)
				cdevice.Free(s)
				if err != nil || !got.Equal(sc) {
					t.Errorf("got %v, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
