package cdevice_test

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// Every kind of object that crosses the boundary shows under its own name
// in Leaks while it is held, counts in Exports or Imports, and, with
// tracing on, LeakSites names the code that made it; releasing it brings
// every counter back.
func TestLeaksNameEveryKind(t *testing.T) {
	cdevice.TraceLeaks(true)
	defer cdevice.TraceLeaks(false)
	ctx := context.Background()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rb := array.NewRecordBatch(sc, []arrow.Array{arr}, 3)
	defer rb.Release()

	kinds := []struct {
		name  string
		field func(cdevice.Leaks) int64
		site  string // a frame LeakSites must name
		make  func(t *testing.T) (release func())
	}{
		{"exported schema", func(l cdevice.Leaks) int64 { return l.ExportedSchemas }, "cdevice.ExportSchema", func(t *testing.T) func() {
			s := offHeap[abi.Schema](t)
			ok(t, cdevice.ExportSchema(sc, s))
			return func() { ffi.Call(s.Release, uintptr(unsafe.Pointer(s))) }
		}},
		{"exported array", func(l cdevice.Leaks) int64 { return l.ExportedArrays }, "cdevice.ExportArray", func(t *testing.T) func() {
			a := offHeap[abi.Array](t)
			ok(t, cdevice.ExportArray(arr, a, nil))
			return func() { ffi.Call(a.Release, uintptr(unsafe.Pointer(a))) }
		}},
		{"exported stream", func(l cdevice.Leaks) int64 { return l.ExportedStreams }, "stream.ExportReader", func(t *testing.T) func() {
			s := offHeap[abi.ArrayStream](t)
			rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rb})
			ok(t, err)
			defer rdr.Release()
			ok(t, stream.ExportReader(rdr, s))
			return func() { ffi.Call(s.Release, uintptr(unsafe.Pointer(s))) }
		}},
		{"imported array", func(l cdevice.Leaks) int64 { return l.ImportedArrays }, "cdevice.ImportArray", func(t *testing.T) func() {
			a, s := offHeap[abi.Array](t), offHeap[abi.Schema](t)
			ok(t, cdevice.ExportArray(arr, a, s))
			got, err := cdevice.ImportArray(a, s)
			ok(t, err)
			return got.Release
		}},
		{"imported stream", func(l cdevice.Leaks) int64 { return l.ImportedStreams }, "stream.ImportReader", func(t *testing.T) func() {
			s := offHeap[abi.ArrayStream](t)
			rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rb})
			ok(t, err)
			defer rdr.Release()
			ok(t, stream.ExportReader(rdr, s))
			r, err := stream.ImportReader(s)
			ok(t, err)
			return r.Release
		}},
		{"device array", func(l cdevice.Leaks) int64 { return l.DeviceArrays }, "cdevice.CopyToDevice", func(t *testing.T) func() {
			da, err := cdevice.CopyToDevice(ctx, arr, device.CPU)
			ok(t, err)
			if l := cdevice.LiveLeaks(); l.DeviceAllocs == 0 {
				t.Error("a device array's memory is not counted in DeviceAllocs")
			}
			return da.Release
		}},
		{"DLPack export", func(l cdevice.Leaks) int64 { return l.ExportedTensors }, "dlpack.Export", func(t *testing.T) func() {
			da, err := cdevice.CopyToDevice(ctx, arr, device.CPU)
			ok(t, err)
			defer da.Release()
			mt, err := dlpack.Export(context.Background(), da)
			ok(t, err)
			return mt.Delete
		}},
		{"DLPack import", func(l cdevice.Leaks) int64 { return l.ImportedTensors }, "dlpack.Import", func(t *testing.T) func() {
			da, err := cdevice.CopyToDevice(ctx, arr, device.CPU)
			ok(t, err)
			defer da.Release()
			mt, err := dlpack.Export(context.Background(), da)
			ok(t, err)
			back, err := dlpack.Import(context.Background(), mt)
			ok(t, err)
			return back.Release
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			before := cdevice.LiveLeaks()
			release := k.make(t)
			held := cdevice.LiveLeaks()
			if got := k.field(held) - k.field(before); got != 1 {
				t.Errorf("%s: its counter rose by %d, want 1 (%s)", k.name, got, held)
			}
			if held.Exports()+held.Imports()+held.DeviceArrays <= before.Exports()+before.Imports()+before.DeviceArrays {
				t.Errorf("%s: not in Exports, Imports or DeviceArrays (%s)", k.name, held)
			}
			if !strings.Contains(held.String(), "=") {
				t.Errorf("String %q names no counter", held.String())
			}
			named := false
			for _, s := range cdevice.LeakSites() {
				if strings.HasPrefix(s, k.name) && strings.Contains(s, k.site) && strings.Contains(s, "TestLeaksNameEveryKind") {
					named = true
				}
			}
			if !named {
				t.Errorf("no leak site names a %s made by %s in this test:\n%s", k.name, k.site, strings.Join(cdevice.LeakSites(), "\n"))
			}
			release()
			after := cdevice.LiveLeaks()
			after.CAllocations = before.CAllocations // the test's own structs, freed at cleanup
			if after != before {
				t.Errorf("after release: %s, before: %s", after, before)
			}
		})
	}
	if sites := cdevice.LeakSites(); len(sites) != 0 {
		t.Errorf("sites left after every release:\n%s", strings.Join(sites, "\n"))
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A test that exports into testsupport.OffHeap structs and then skips (a
// C compiler or runtime it needs is missing) leaves nothing live: the
// binary's leak check stays about the tests that ran.
func TestSkippedTestLeavesNoExport(t *testing.T) {
	before := cdevice.LiveLeaks()
	t.Run("skips after exporting", func(t *testing.T) {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues([]int64{1, 2, 3}, nil)
		arr := b.NewArray()
		defer arr.Release()
		if err := cdevice.ExportArray(arr, testsupport.OffHeap[abi.Array](t), testsupport.OffHeap[abi.Schema](t)); err != nil {
			t.Fatal(err)
		}
		t.Skip("as a test does when the C library it needs cannot be built")
	})
	if after := cdevice.LiveLeaks(); after.Exports() != before.Exports() || after.Handles != before.Handles {
		t.Errorf("live after a skipped test: %v (before: %v)", after, before)
	}
}
