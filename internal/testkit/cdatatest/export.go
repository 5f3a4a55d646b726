package cdatatest

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// exportEmpty exports an empty array of type dt (with its schema when
// withSchema) into C structs and calls check on them; the structs are
// released afterwards by C (cRelease) or by the API.
func (s *suite) exportEmpty(t *testing.T, dt arrow.DataType, withSchema, cRelease bool, check func(out *abi.Array, sc *abi.Schema)) {
	t.Helper()
	bld := array.NewBuilder(mem, dt)
	defer bld.Release()
	arr := bld.NewArray()
	defer arr.Release()
	out := testsupport.OffHeap[abi.Array](t)
	var sc *abi.Schema
	if withSchema {
		sc = testsupport.OffHeap[abi.Schema](t)
	}
	s.api.ExportArrowArray(arr, addr(out), addr(sc))
	if out.Release == 0 || (sc != nil && sc.Release == 0) {
		t.Fatalf("ExportArrowArray left a released struct")
	}
	check(out, sc)
	if cRelease {
		s.p.call(t, "cc_release_array", addr(out))
	} else {
		s.api.ReleaseCArrowArray(addr(out))
	}
	if !out.Released() {
		t.Errorf("the array is not released after its release callback")
	}
	if sc != nil {
		if cRelease {
			s.p.call(t, "cc_release_schema", addr(sc))
		} else {
			s.api.ReleaseCArrowSchema(addr(sc))
		}
		if !sc.Released() {
			t.Errorf("the schema is not released after its release callback")
		}
	}
}

// header compares an exported array's counts with want.
func header(t *testing.T, what string, a *abi.Array, length, nulls, offset, nBuffers, nChildren int64) {
	t.Helper()
	if a.Length != length || a.NullCount != nulls || a.Offset != offset || a.NBuffers != nBuffers || a.NChildren != nChildren {
		t.Errorf("%s: length %d, null_count %d, offset %d, n_buffers %d, n_children %d; want %d, %d, %d, %d, %d",
			what, a.Length, a.NullCount, a.Offset, a.NBuffers, a.NChildren, length, nulls, offset, nBuffers, nChildren)
	}
}

var exportScenarios = []scenario{
	{"EmptyListExport", func(t *testing.T, s *suite) {
		s.exportEmpty(t, arrow.LargeListOf(arrow.PrimitiveTypes.Int32), false, false, func(out *abi.Array, _ *abi.Schema) {
			header(t, "array", out, 0, 0, 0, 2, 1)
			if out.Buffers == 0 || out.Children == 0 {
				t.Errorf("buffers %#x, children %#x; want both set", out.Buffers, out.Children)
			}
		})
	}},
	{"EmptyDictExport", func(t *testing.T, s *suite) {
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String, Ordered: true}
		s.exportEmpty(t, dt, true, true, func(out *abi.Array, sc *abi.Schema) {
			if f := cString(sc.Format); f != "c" {
				t.Errorf("format %q, want c", f)
			}
			if sc.Flags&abi.FlagDictionaryOrdered == 0 {
				t.Errorf("flags %#x without dictionary-ordered", sc.Flags)
			}
			if sc.NChildren != 0 || sc.Dictionary == 0 {
				t.Fatalf("schema with %d children and dictionary %#x; want 0 and one", sc.NChildren, sc.Dictionary)
			}
			if f := cString(abi.At[abi.Schema](sc.Dictionary).Format); f != "u" {
				t.Errorf("dictionary format %q, want u", f)
			}
			header(t, "array", out, 0, 0, 0, 2, 0)
			if out.Children != 0 || out.Dictionary == 0 {
				t.Fatalf("children %#x, dictionary %#x; want none and one", out.Children, out.Dictionary)
			}
			d := abi.At[abi.Array](out.Dictionary)
			header(t, "dictionary", d, 0, 0, 0, 3, 0)
			if d.Children != 0 || d.Dictionary != 0 {
				t.Errorf("dictionary's children %#x, dictionary %#x; want none", d.Children, d.Dictionary)
			}
		})
	}},
	{"EmptyStringExport", func(t *testing.T, s *suite) {
		s.exportEmpty(t, arrow.BinaryTypes.String, true, false, func(out *abi.Array, sc *abi.Schema) {
			if f := cString(sc.Format); f != "u" || sc.NChildren != 0 || sc.Dictionary != 0 {
				t.Errorf("schema %q with %d children, dictionary %#x; want u, 0, none", f, sc.NChildren, sc.Dictionary)
			}
			if out.NBuffers != 3 {
				t.Fatalf("%d buffers, want 3", out.NBuffers)
			}
			if out.Buffer(0) != nil || out.Buffer(1) == nil || out.Buffer(2) == nil {
				t.Errorf("buffers %p %p %p; want none, then offsets and data", out.Buffer(0), out.Buffer(1), out.Buffer(2))
			}
		})
	}},
	{"EmptyUnionExport", func(t *testing.T, s *suite) {
		dt := arrow.SparseUnionOf([]arrow.Field{{Name: "child", Type: arrow.PrimitiveTypes.Int64}}, []arrow.UnionTypeCode{0})
		s.exportEmpty(t, dt, true, true, func(out *abi.Array, sc *abi.Schema) {
			if sc.NChildren != 1 || sc.Dictionary != 0 {
				t.Errorf("schema with %d children, dictionary %#x; want 1, none", sc.NChildren, sc.Dictionary)
			}
			if out.NBuffers != 1 {
				t.Fatalf("%d buffers, want 1", out.NBuffers)
			}
			if out.Buffer(0) == nil {
				t.Errorf("no type ids buffer")
			}
		})
	}},
	{"ExportRoundTrip", func(t *testing.T, s *suite) {
		// Not one of arrow-go's tests: the export functions that its suite
		// reaches only through streams, each imported back and released
		// by C.
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		rec := recs[0]
		out, sc := testsupport.OffHeap[abi.Array](t), testsupport.OffHeap[abi.Schema](t)

		s.api.ExportArrowSchema(rec.Schema(), addr(sc))
		got, err := s.api.ImportCArrowSchema(addr(sc))
		noError(t, "ImportCArrowSchema", err)
		if !got.Equal(rec.Schema()) {
			t.Errorf("schema %s, want %s", got, rec.Schema())
		}

		s.api.ExportArrowRecordBatch(rec, addr(out), addr(sc))
		rb, err := s.api.ImportCRecordBatch(addr(out), addr(sc))
		noError(t, "ImportCRecordBatch", err)
		if !array.RecordEqual(rb, rec) {
			t.Errorf("batch %v, want %v", rb, rec)
		}
		rb.Release()

		*out = abi.Array{}
		s.api.ExportArrowRecordBatch(rec, addr(out), 0)
		rb, err = s.api.ImportCRecordBatchWithSchema(addr(out), rec.Schema())
		noError(t, "ImportCRecordBatchWithSchema", err)
		if !array.RecordEqual(rb, rec) {
			t.Errorf("batch %v, want %v", rb, rec)
		}
		rb.Release()

		*out, *sc = abi.Array{}, abi.Schema{}
		col := rec.Column(3)
		s.api.ExportArrowArray(col, addr(out), addr(sc))
		fld, arr, err := s.api.ImportCArray(addr(out), addr(sc))
		noError(t, "ImportCArray", err)
		if !arrow.TypeEqual(fld.Type, col.DataType()) || !array.Equal(arr, col) {
			t.Errorf("imported %v %v, want %v", fld, arr, col)
		}
		arr.Release()

		*out, *sc = abi.Array{}, abi.Schema{}
		s.api.ExportArrowRecordBatch(rec, addr(out), addr(sc))
		s.p.call(t, "cc_release_array", addr(out))
		s.p.call(t, "cc_release_schema", addr(sc))
		if !out.Released() || !sc.Released() {
			t.Errorf("C's release left array released %v, schema released %v", out.Released(), sc.Released())
		}
	}},
	{"ExportUnsupportedInput", func(t *testing.T, s *suite) {
		// arrow-go's export functions return no error and panic (or crash)
		// on input they cannot export; ours leave the output released.
		if !s.api.Robust {
			t.Skip("arrow-go panics on input it cannot export")
		}
		out, sc := testsupport.OffHeap[abi.Array](t), testsupport.OffHeap[abi.Schema](t)
		st := testsupport.OffHeap[abi.ArrayStream](t)
		testsupport.NoPanic(t, "ExportArrowSchema(nil)", func() { s.api.ExportArrowSchema(nil, addr(sc)) })
		testsupport.NoPanic(t, "ExportArrowArray(nil)", func() { s.api.ExportArrowArray(nil, addr(out), addr(sc)) })
		testsupport.NoPanic(t, "ExportArrowRecordBatch(nil)", func() { s.api.ExportArrowRecordBatch(nil, addr(out), addr(sc)) })
		testsupport.NoPanic(t, "ExportRecordReader(nil)", func() { s.api.ExportRecordReader(nil, addr(st)) })
		if !out.Released() || !sc.Released() || !st.Released() {
			t.Errorf("released: array %v, schema %v, stream %v; want all", out.Released(), sc.Released(), st.Released())
		}
		testsupport.NoPanic(t, "ExportArrowArray into nil", func() {
			a := fromJSON(t, arrow.PrimitiveTypes.Int32, `[1]`)
			defer a.Release()
			s.api.ExportArrowArray(a, 0, 0)
		})
	}},
}
