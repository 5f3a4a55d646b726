package cdatatest

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/abi"
)

// nodes is the number of C array nodes (with children and dictionaries)
// that d copies into.
func nodes(d arrow.ArrayData) int {
	n := 1
	for _, c := range d.Children() {
		n += nodes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += nodes(d.Dictionary())
	}
	return n
}

// importCopy copies a into C memory, imports the copy with a's type, and
// checks the values, the move and that releasing the import releases the
// C array once and frees all of it.
func (s *suite) importCopy(t *testing.T, a arrow.Array) {
	t.Helper()
	tk := s.p.token(t)
	carr := tk.array(t, a.Data())
	got, err := s.api.ImportCArrayWithType(addr(carr), a.DataType())
	noError(t, "ImportCArrayWithType", err)
	if !array.Equal(a, got) {
		t.Errorf("imported %v, want %v", got, a)
	}
	if !carr.Released() {
		t.Errorf("the import did not move the C array out of its struct")
	}
	got.Release()
	wantSettled(t, tk, 1, nodes(a.Data()), false)
}

// importCopies runs importCopy on each case's array, each as a subtest.
func (s *suite) importCopies(t *testing.T, cases []arrayCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.make(t)
			defer a.Release()
			s.importCopy(t, a)
		})
	}
}

// structOfUnion is a struct array with one field, the union array u.
func structOfUnion(u arrow.Array) arrow.Array {
	st := arrow.StructOf(arrow.Field{Name: "union_field", Type: u.DataType()})
	data := array.NewData(st, u.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{u.Data()}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// importBatchWithBadSchema copies arr (a struct array) into C and imports
// it with the C schema n, which does not describe it: the import must fail
// and the C array must be released once (by the import or, as arrow-go
// documents for a failed import, by ReleaseCArrowArray).
func (s *suite) importBatchWithBadSchema(t *testing.T, arr arrow.Array, n node) {
	t.Helper()
	atk, stk := s.p.token(t), s.p.token(t)
	carr := atk.array(t, arr.Data())
	sc := stk.schema(t, n)
	rb, err := s.api.ImportCRecordBatch(addr(carr), addr(sc))
	if err == nil {
		rb.Release()
	}
	wantError(t, "ImportCRecordBatch with a schema of other types", err)
	if !carr.Released() {
		s.api.ReleaseCArrowArray(addr(carr))
	}
	wantSettled(t, atk, 1, nodes(arr.Data()), false)
	wantSchemaReleased(t, stk, sc, n.count())
}

var arrayScenarios = []scenario{
	{"SimpleArrayExport", func(t *testing.T, s *suite) {
		tk := s.p.token(t)
		root := s.p.call(t, "cc_int32_array", tk.addr, 10)
		tk.cleanupArray(t, root)
		carr := abi.At[abi.Array](root)
		got, err := s.api.ImportCArrayWithType(root, arrow.PrimitiveTypes.Int32)
		noError(t, "ImportCArrayWithType", err)
		if n := tk.releases(t); n != 0 {
			t.Errorf("the C array was released (%d) while the import holds it", n)
		}
		if !carr.Released() {
			t.Errorf("the import did not move the C array out of its struct")
		}
		got.Release()
		runtime.GC()
		wantSettled(t, tk, 1, 1, true)
	}},
	{"SimpleArrayAndSchema", func(t *testing.T, s *suite) {
		stk, atk := s.p.token(t), s.p.token(t)
		sc := stk.schema(t, node{format: "i", metadata: 1})
		root := s.p.call(t, "cc_int32_array", atk.addr, 10)
		atk.cleanupArray(t, root)
		first := abi.At[abi.Array](root).Buffer(1)

		fld, got, err := s.api.ImportCArray(root, addr(sc))
		noError(t, "ImportCArray", err)
		if !arrow.TypeEqual(fld.Type, arrow.PrimitiveTypes.Int32) {
			t.Errorf("field type %s, want int32", fld.Type)
		}
		vals := got.(*array.Int32).Int32Values()
		if len(vals) != 10 {
			t.Fatalf("%d values, want 10", len(vals))
		}
		if unsafe.Pointer(&vals[0]) != first {
			t.Errorf("values at %p, want the C buffer at %p (zero copy)", &vals[0], first)
		}
		for i, v := range vals {
			if v != int32(i+1) {
				t.Errorf("value %d is %d, want %d", i, v, i+1)
			}
		}
		wantSchemaReleased(t, stk, sc, 1)
		got.Release()
		wantSettled(t, atk, 1, 1, false)
	}},
	{"PrimitiveArrs", func(t *testing.T, s *suite) { s.importCopies(t, primitiveArrays) }},
	{"PrimitiveSliced", func(t *testing.T, s *suite) {
		a := fromJSON(t, arrow.PrimitiveTypes.Int16, `[1, 2, -3]`)
		defer a.Release()
		sl := array.NewSlice(a, 1, 2)
		defer sl.Release()
		tk := s.p.token(t)
		carr := tk.array(t, sl.Data())
		if carr.Offset != 1 {
			t.Fatalf("C copy has offset %d, want 1", carr.Offset)
		}
		got, err := s.api.ImportCArrayWithType(addr(carr), a.DataType())
		noError(t, "ImportCArrayWithType", err)
		if !array.Equal(sl, got) || !array.SliceEqual(a, 1, 2, got, 0, int64(got.Len())) {
			t.Errorf("imported %v, want %v", got, sl)
		}
		if !carr.Released() {
			t.Errorf("the import did not move the C array out of its struct")
		}
		got.Release()
		wantSettled(t, tk, 1, 1, false)
	}},
	{"NestedArrays", func(t *testing.T, s *suite) { s.importCopies(t, nestedArrays) }},
	{"StrArrayAllNulls", func(t *testing.T, s *suite) {
		tk := s.p.token(t)
		root := s.p.call(t, "cc_string_all_nulls", tk.addr, 1000)
		tk.cleanupArray(t, root)
		got, err := s.api.ImportCArrayWithType(root, arrow.BinaryTypes.String)
		noError(t, "ImportCArrayWithType", err)
		data := got.Data().Buffers()[2]
		switch {
		case data == nil:
			t.Errorf("no data buffer")
		case data.Len() != 0:
			t.Errorf("data buffer of %d bytes, want 0", data.Len())
		}
		if got.Len() != 1000 || got.NullN() != 1000 {
			t.Errorf("length %d with %d nulls, want 1000 and 1000", got.Len(), got.NullN())
		}
		got.Release()
		wantSettled(t, tk, 1, 1, false)
	}},
	{"RecordBatch", func(t *testing.T, s *suite) {
		arr := structABArray(t)
		defer arr.Release()
		n := node{format: "+s", children: []node{
			{format: "c", name: "a", flags: nullable},
			{format: "u", name: "b", flags: nullable, metadata: 2},
		}}
		atk, stk := s.p.token(t), s.p.token(t)
		carr := atk.array(t, arr.Data())
		sc := stk.schema(t, n)
		rb, err := s.api.ImportCRecordBatch(addr(carr), addr(sc))
		noError(t, "ImportCRecordBatch", err)
		defer rb.Release()
		if rb.NumCols() != 2 || rb.ColumnName(0) != "a" || rb.ColumnName(1) != "b" {
			t.Fatalf("columns %v, want a and b", rb.Schema())
		}
		st := arr.(*array.Struct)
		want := array.NewRecordBatch(rb.Schema(), []arrow.Array{st.Field(0), st.Field(1)}, -1)
		defer want.Release()
		if !array.RecordEqual(rb, want) {
			t.Errorf("imported %v, want %v", rb, want)
		}
		wantSchemaReleased(t, stk, sc, n.count())

		// The same batch again, with the schema now known.
		tk2 := s.p.token(t)
		carr2 := tk2.array(t, arr.Data())
		rb2, err := s.api.ImportCRecordBatchWithSchema(addr(carr2), rb.Schema())
		noError(t, "ImportCRecordBatchWithSchema", err)
		if !array.RecordEqual(rb2, want) {
			t.Errorf("ImportCRecordBatchWithSchema: %v, want %v", rb2, want)
		}
		rb2.Release()
		wantSettled(t, tk2, 1, 3, false)
	}},
	{"ImportStructWithInvalidSchema", func(t *testing.T, s *suite) {
		arr := structABArray(t)
		defer arr.Release()
		s.importBatchWithBadSchema(t, arr, node{format: "+s", children: []node{
			{format: "c", name: "a", flags: nullable},
			{format: "l", name: "b", flags: nullable},
		}})
	}},
	{"ImportDenseUnionWithInvalidSchema", func(t *testing.T, s *suite) {
		u := unionArray(t, arrow.DenseMode)
		defer u.Release()
		arr := structOfUnion(u)
		defer arr.Release()
		s.importBatchWithBadSchema(t, arr, node{format: "+s", children: []node{{format: "i", name: "union_field", flags: nullable}}})
	}},
	{"ImportSparseUnionWithInvalidSchema", func(t *testing.T, s *suite) {
		u := unionArray(t, arrow.SparseMode)
		defer u.Release()
		arr := structOfUnion(u)
		defer arr.Release()
		s.importBatchWithBadSchema(t, arr, node{format: "+s", children: []node{{format: "u", name: "union_field", flags: nullable}}})
	}},
}
