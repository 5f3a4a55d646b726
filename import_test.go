package cdevice_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Import (import.go) of structs made by C: testdata/c/cdata.c, built with
// gcc when the tests run (the harness is in c_abi_test.go).

func TestImportCProducers(t *testing.T) {
	for _, p := range producers {
		for _, n := range []int{0, 1, 37} {
			t.Run(fmt.Sprintf("%s/n=%d", p.name, n), func(t *testing.T) {
				base := cLive(t)
				s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
				p.make(t, s, a, n)
				nodes := arrayStructs(a)
				got, err := importNoPanic(t, a, s)
				if err != nil {
					releaseArrayC(a)
					releaseSchemaC(s)
					t.Fatalf("ImportArray: %v", err)
				}
				if !a.Released() || !s.Released() {
					t.Error("import did not mark the moved-from structs released")
				}
				want := p.want(n)
				defer want.Release()
				if !array.Equal(want, got) {
					t.Errorf("imported\n%v\nwant\n%v", got, want)
				}
				if !arrow.TypeEqual(want.DataType(), got.DataType(), arrow.CheckMetadata()) {
					t.Errorf("type %v, want %v (with metadata)", got.DataType(), want.DataType())
				}
				// The schema is released by the import; the array only
				// after the last Go reference goes. An empty array may be
				// released at once: no Go buffer points into it.
				held := cLive(t) - base
				if held != nodes && (n > 0 || held != 0) {
					t.Errorf("%d C structs live after import, want %d (the array tree)", held, nodes)
				}
				got.Retain()
				got.Release()
				if live := cLive(t) - base; live != held {
					t.Errorf("%d C structs live with a reference left, want %d", live, held)
				}
				got.Release()
				if live := cLive(t) - base; live != 0 {
					t.Errorf("%d C structs live after the last Release, want 0", live)
				}
			})
		}
	}
}

func TestImportCSlice(t *testing.T) {
	// A slice of an import keeps the C data alive on its own.
	base := cLive(t)
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	ccall(t, "ct_make_utf8", addr(s), addr(a), 20)
	got, err := cdevice.ImportArray(a, s)
	if err != nil {
		releaseArrayC(a)
		releaseSchemaC(s)
		t.Fatalf("ImportArray: %v", err)
	}
	sl := array.NewSlice(got, 5, 15)
	got.Release()
	if cLive(t) == base {
		t.Fatal("C array released while a slice still references it")
	}
	want := wantUTF8(20)
	defer want.Release()
	wantSl := array.NewSlice(want, 5, 15)
	defer wantSl.Release()
	if !array.Equal(wantSl, sl) {
		t.Errorf("slice\n%v\nwant\n%v", sl, wantSl)
	}
	sl.Release()
	if got := cLive(t); got != base {
		t.Errorf("%d C structs live, want %d", got, base)
	}
}

func TestImportCField(t *testing.T) {
	base := cLive(t)
	s := testsupport.OffHeap[abi.Schema](t)
	ccall(t, "ct_make_struct", addr(s), 0, 0)
	f, err := cdevice.ImportField(s)
	if err != nil {
		releaseSchemaC(s)
		t.Fatalf("ImportField: %v", err)
	}
	if f.Name != "struct" || !f.Nullable {
		t.Errorf("field %q nullable=%v, want \"struct\" nullable", f.Name, f.Nullable)
	}
	if !arrow.TypeEqual(f.Type, structType, arrow.CheckMetadata()) {
		t.Errorf("type %v, want %v with metadata k=v on b", f.Type, structType)
	}
	if got := cLive(t); got != base {
		t.Errorf("%d C structs live after ImportField, want %d", got, base)
	}

	ccall(t, "ct_make_record_batch", addr(s), 0, 0)
	sc, err := cdevice.ImportSchema(s)
	if err != nil {
		releaseSchemaC(s)
		t.Fatalf("ImportSchema: %v", err)
	}
	want := wantRecordBatch(0)
	defer want.Release()
	if !sc.Equal(want.Schema()) || !sc.Metadata().Equal(recordMetadata) {
		t.Errorf("schema\n%v\nwant\n%v", sc, want.Schema())
	}
	if got := cLive(t); got != base {
		t.Errorf("%d C structs live after ImportSchema, want %d", got, base)
	}
}

func TestImportCRecordBatch(t *testing.T) {
	const n = 37
	base := cLive(t)
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	ccall(t, "ct_make_record_batch", addr(s), addr(a), n)
	nodes := arrayStructs(a)
	rb, err := cdevice.ImportRecordBatch(a, s)
	if err != nil {
		releaseArrayC(a)
		releaseSchemaC(s)
		t.Fatalf("ImportRecordBatch: %v", err)
	}
	want := wantRecordBatch(n)
	defer want.Release()
	if !rb.Schema().Equal(want.Schema()) || !rb.Schema().Metadata().Equal(recordMetadata) {
		t.Errorf("schema\n%v\nwant\n%v", rb.Schema(), want.Schema())
	}
	if !array.RecordEqual(want, rb) {
		t.Errorf("record batch\n%v\nwant\n%v", rb, want)
	}
	if live := cLive(t) - base; live != nodes {
		t.Errorf("%d C structs live before Release, want %d", live, nodes)
	}
	rb.Release()
	if got := cLive(t); got != base {
		t.Errorf("%d C structs live after Release, want %d", got, base)
	}
}

func TestImportCDeviceArray(t *testing.T) {
	base := cLive(t)
	s, da := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.DeviceArray](t)
	ccall(t, "ct_make_device_array_cpu", addr(s), addr(da))
	got, err := cdevice.ImportDeviceArray(context.Background(), da, s)
	if err != nil {
		releaseArrayC(&da.Array)
		releaseSchemaC(s)
		t.Fatalf("ImportDeviceArray: %v", err)
	}
	want := wantInt32(10, true)
	defer want.Release()
	if !array.Equal(want, got) {
		t.Errorf("imported\n%v\nwant\n%v", got, want)
	}
	if live := cLive(t) - base; live != 1 {
		t.Errorf("%d C structs live before Release, want 1", live)
	}
	got.Release()
	if got := cLive(t); got != base {
		t.Errorf("%d C structs live after Release, want %d", got, base)
	}
}

// TestImportMalformed: a validating importer rejects every malformed case
// with ErrInvalid or ErrReleased, never panics, and releases what it
// rejected (import failure releases the input).
func TestImportMalformed(t *testing.T) {
	count := int(ccall(t, "ct_malformed_count"))
	if count < 32 {
		t.Errorf("%d malformed cases, want at least 32", count)
	}
	name := cfn(t, "ct_malformed_name")
	if name(uintptr(count)) != 0 || ccall(t, "ct_make_malformed", uintptr(count), 0, 0) != -1 {
		t.Error("unknown case id not refused")
	}
	for id := 0; id < count; id++ {
		for _, full := range []bool{false, true} {
			caseName := ffi.GoString(name(uintptr(id)))
			mode := map[bool]string{false: "default", true: "full"}[full]
			t.Run(caseName+"/"+mode, func(t *testing.T) {
				var opts []cdevice.ImportOption
				if full {
					opts = append(opts, cdevice.WithFullValidation())
				}
				base := cLive(t)
				s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
				if rc := ccall(t, "ct_make_malformed", uintptr(id), addr(s), addr(a)); rc != 0 {
					t.Fatalf("ct_make_malformed(%d): %d", id, rc)
				}
				got, err := importNoPanic(t, a, s, opts...)
				switch {
				case err == nil && !full && contentOnly[caseName]:
					got.Release()
				case err == nil:
					// Not printed: formatting invalid data may itself fail.
					t.Errorf("ImportArray accepted it as %v, length %d", got.DataType(), got.Len())
					got.Release()
				case !errors.Is(err, cdevice.ErrInvalid) && !errors.Is(err, cdevice.ErrReleased):
					t.Errorf("error %q is neither ErrInvalid nor ErrReleased", err)
				}
				if live := cLive(t); live != base {
					t.Errorf("%d C structs left unreleased (schema released=%v, array released=%v)",
						live-base, s.Released(), a.Released())
					releaseArrayC(a) // keep the other tests' counters meaningful
					releaseSchemaC(s)
				}
			})
		}
	}
}
