package cdevice_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// The other side of these tests is testdata/c/cdata.c, compiled with gcc at
// test time. Its producers and the want* builders below describe the same
// data; keep them in step.

func cfn(t testing.TB, name string) func(args ...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "cdata"), name)
}

// ccall calls a C function returning int and gives its value sign-extended.
func ccall(t testing.TB, name string, args ...uintptr) int32 {
	t.Helper()
	return int32(cfn(t, name)(args...))
}

func cLive(t testing.TB) int64 { t.Helper(); return int64(int(cfn(t, "ct_live_count")())) }

func cReleases(t testing.TB) int64 { t.Helper(); return int64(int(cfn(t, "ct_release_count")())) }

func cLastError(t testing.TB) string {
	t.Helper()
	return ffi.GoString(cfn(t, "ct_last_error")())
}

func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// releaseC runs a struct's own release callback from Go, if it has one.
func releaseSchemaC(s *abi.Schema) {
	if s.Release != 0 {
		ffi.Call(s.Release, addr(s))
	}
}

func releaseArrayC(a *abi.Array) {
	if a.Release != 0 {
		ffi.Call(a.Release, addr(a))
	}
}

// arrayStructs counts the ArrowArray structs in a tree (root, children,
// dictionaries): the structs the C side keeps live while an import holds it.
func arrayStructs(a *abi.Array) int64 {
	if a == nil {
		return 0
	}
	n := int64(1)
	for i := 0; i < int(a.NChildren) && a.Children != 0; i++ {
		n += arrayStructs(a.Child(i))
	}
	if a.Dictionary != 0 {
		n += arrayStructs((*abi.Array)(abi.Pointer(a.Dictionary)))
	}
	return n
}

// ---- expected data, built with arrow-go --------------------------------

var mem = memory.DefaultAllocator

func wantInt32(n int, withNulls bool) arrow.Array {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		if withNulls && i%3 == 2 {
			b.AppendNull()
		} else {
			b.Append(int32(i * 3))
		}
	}
	return b.NewArray()
}

// wantStrings: prefix followed by i*mul+add, null where nullMod > 0 && i%nullMod == nullRem.
func wantStrings(n int, prefix string, mul, add, nullMod, nullRem int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		if nullMod > 0 && i%nullMod == nullRem {
			b.AppendNull()
		} else {
			b.Append(fmt.Sprintf("%s%d", prefix, i*mul+add))
		}
	}
	return b.NewArray()
}

func wantUTF8(n int) arrow.Array { return wantStrings(n, "s", 1, 0, 4, 3) }

func wantListInt64(n int) arrow.Array {
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int64Builder)
	k := int64(0)
	for i := 0; i < n; i++ {
		if i%5 == 4 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for j := 0; j < i%4; j++ {
			vb.Append(k)
			k++
		}
	}
	return b.NewArray()
}

var structType = arrow.StructOf(
	arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: false,
		Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
)

func wantStruct(n int) arrow.Array {
	b := array.NewStructBuilder(mem, structType)
	defer b.Release()
	ab := b.FieldBuilder(0).(*array.Int32Builder)
	sb := b.FieldBuilder(1).(*array.StringBuilder)
	for i := 0; i < n; i++ {
		b.Append(true)
		if i%2 == 1 {
			ab.AppendNull()
		} else {
			ab.Append(int32(i))
		}
		sb.Append(fmt.Sprintf("b%d", i))
	}
	return b.NewArray()
}

func wantDictUTF8(n int) arrow.Array {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String, Ordered: true}
	ib := array.NewInt16Builder(mem)
	defer ib.Release()
	for i := 0; i < n; i++ {
		if i%5 == 4 {
			ib.AppendNull()
		} else {
			ib.Append(int16(i % 3))
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{"red", "green", "blue"}, nil)
	dict := sb.NewArray()
	defer dict.Release()
	return array.NewDictionaryArray(dt, idx, dict)
}

var unionFields = []arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}

func unionTypeIDs(n int) *memory.Buffer {
	ids := make([]byte, n)
	for i := range ids {
		ids[i] = 5
		if i%2 == 1 {
			ids[i] = 7
		}
	}
	return memory.NewBufferBytes(ids)
}

func wantInt32Seq(n, mul int) arrow.Array {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Append(int32(i * mul))
	}
	return b.NewArray()
}

func wantSparseUnion(n int) arrow.Array {
	ints, strs := wantInt32Seq(n, 1), wantStrings(n, "u", 1, 0, 0, 0)
	defer ints.Release()
	defer strs.Release()
	dt := arrow.SparseUnionOf(unionFields, []arrow.UnionTypeCode{5, 7})
	return array.NewSparseUnion(dt, n, []arrow.Array{ints, strs}, unionTypeIDs(n), 0)
}

func wantDenseUnion(n int) arrow.Array {
	ints, strs := wantInt32Seq((n+1)/2, 2), wantStrings(n/2, "u", 2, 1, 0, 0)
	defer ints.Release()
	defer strs.Release()
	offsets := make([]int32, n)
	for i := range offsets {
		offsets[i] = int32(i / 2)
	}
	dt := arrow.DenseUnionOf(unionFields, []arrow.UnionTypeCode{5, 7})
	return array.NewDenseUnion(dt, n, []arrow.Array{ints, strs}, unionTypeIDs(n),
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), 0)
}

func wantBool(n int) arrow.Array {
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		if i%7 == 6 {
			b.AppendNull()
		} else {
			b.Append(i%3 == 0)
		}
	}
	return b.NewArray()
}

func wantSlicedInt64(n int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		if j := i + 3; j%4 == 0 {
			b.AppendNull()
		} else {
			b.Append(int64(j * 10))
		}
	}
	return b.NewArray()
}

func wantStringView(n int) arrow.Array {
	b := array.NewStringViewBuilder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		switch {
		case i%5 == 2:
			b.AppendNull()
		case i%3 == 0:
			b.Append(fmt.Sprintf("sv%d", i))
		default:
			b.Append(fmt.Sprintf("string view number %d", i))
		}
	}
	return b.NewArray()
}

func wantREE(n int) arrow.Array {
	eb := array.NewInt32Builder(mem)
	defer eb.Release()
	vb := array.NewFloat64Builder(mem)
	defer vb.Release()
	for k, pos := 0, 0; pos < n; k++ {
		pos = min(pos+k%3+1, n)
		eb.Append(int32(pos))
		if k%4 == 3 {
			vb.AppendNull()
		} else {
			vb.Append(float64(k) * 1.5)
		}
	}
	ends, vals := eb.NewArray(), vb.NewArray()
	defer ends.Release()
	defer vals.Release()
	return array.NewRunEndEncodedArray(ends, vals, n, 0)
}

var recordMetadata = arrow.NewMetadata([]string{"origin", "purpose"}, []string{"cdata.c", "test"})

// recordColumns is ct_make_record_batch's column list, as ct_check_record_batch wants it.
const recordColumns = "ints:i,strs:u,lists:+l,flags:b,dict:s,point:+s,views:vu"

func wantRecordBatch(n int) arrow.RecordBatch {
	cols := []arrow.Array{wantInt32(n, true), wantUTF8(n), wantListInt64(n), wantBool(n),
		wantDictUTF8(n), wantStruct(n), wantStringView(n)}
	names := []string{"ints", "strs", "lists", "flags", "dict", "point", "views"}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
		defer c.Release()
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, &recordMetadata), cols, int64(n))
}

func wantRecordBatchArray(n int) arrow.Array {
	rb := wantRecordBatch(n)
	defer rb.Release()
	return array.RecordToStructArray(rb)
}

// ---- C producers ---------------------------------------------------------

type producer struct {
	name  string
	sym   string
	extra []uintptr // arguments after (schema, array, n)
	want  func(n int) arrow.Array
}

var producers = []producer{
	{"int32", "ct_make_int32", []uintptr{0}, func(n int) arrow.Array { return wantInt32(n, false) }},
	{"int32_nulls", "ct_make_int32", []uintptr{1}, func(n int) arrow.Array { return wantInt32(n, true) }},
	{"utf8", "ct_make_utf8", nil, wantUTF8},
	{"list_int64", "ct_make_list_int64", nil, wantListInt64},
	{"struct", "ct_make_struct", nil, wantStruct},
	{"dict_utf8", "ct_make_dict_utf8", nil, wantDictUTF8},
	{"sparse_union", "ct_make_sparse_union", nil, wantSparseUnion},
	{"dense_union", "ct_make_dense_union", nil, wantDenseUnion},
	{"bool", "ct_make_bool", nil, wantBool},
	{"sliced_int64", "ct_make_sliced_int64", nil, wantSlicedInt64},
	{"string_view", "ct_make_string_view", nil, wantStringView},
	{"ree", "ct_make_ree", nil, wantREE},
	{"record_batch", "ct_make_record_batch", nil, wantRecordBatchArray},
}

func (p producer) make(t testing.TB, s *abi.Schema, a *abi.Array, n int) {
	t.Helper()
	args := append([]uintptr{addr(s), addr(a), uintptr(n)}, p.extra...)
	if rc := ccall(t, p.sym, args...); rc != 0 {
		t.Fatalf("%s: %d", p.sym, rc)
	}
}

// TestCHarness proves the C library builds and its structs work from Go
// without the bridge: produce, read a value, release through the C callbacks.
func TestCHarness(t *testing.T) {
	base, released := cLive(t), cReleases(t)
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	if rc := ccall(t, "ct_make_int32", addr(s), addr(a), 10, 1); rc != 0 {
		t.Fatalf("ct_make_int32: %d", rc)
	}
	if got := ffi.GoString(s.Format); got != "i" {
		t.Errorf("format %q, want \"i\"", got)
	}
	if a.Length != 10 || a.NullCount != 3 || a.NBuffers != 2 {
		t.Errorf("length %d null_count %d n_buffers %d, want 10 3 2", a.Length, a.NullCount, a.NBuffers)
	}
	if v := unsafe.Slice((*int32)(a.Buffer(1)), 10); v[7] != 21 {
		t.Errorf("value 7 = %d, want 21", v[7])
	}
	if got := cLive(t) - base; got != 2 {
		t.Errorf("%d structs live, want 2", got)
	}
	releaseArrayC(a)
	releaseSchemaC(s)
	if !a.Released() || !s.Released() {
		t.Error("C release did not set release to NULL")
	}
	if got := cLive(t); got != base {
		t.Errorf("%d structs live after release, want %d", got, base)
	}
	if got := cReleases(t) - released; got != 2 {
		t.Errorf("%d release callbacks ran, want 2", got)
	}
}

// TestCProducersReleaseFromGo checks every C producer and malformed case
// releases cleanly on its own, so the import tests can trust the counters.
func TestCProducersReleaseFromGo(t *testing.T) {
	base := cLive(t)
	for _, p := range producers {
		for _, n := range []int{0, 1, 37} {
			s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
			p.make(t, s, a, n)
			releaseArrayC(a)
			releaseSchemaC(s)
			if got := cLive(t); got != base {
				t.Errorf("%s(n=%d): %d structs live after release, want %d", p.name, n, got, base)
			}
		}
	}
	count := int(ccall(t, "ct_malformed_count"))
	for id := 0; id < count; id++ {
		s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
		if rc := ccall(t, "ct_make_malformed", uintptr(id), addr(s), addr(a)); rc != 0 {
			t.Fatalf("ct_make_malformed(%d): %d", id, rc)
		}
		releaseArrayC(a)
		releaseSchemaC(s)
		if got := cLive(t); got != base {
			t.Errorf("malformed %s: %d structs live after release, want %d",
				ffi.GoString(cfn(t, "ct_malformed_name")(uintptr(id))), got, base)
		}
	}
}

// TestCConsumersAgainstCProducers checks the C checkers on the C producers'
// own data, so that a failure against a Go export points at the export.
func TestCConsumersAgainstCProducers(t *testing.T) {
	base := cLive(t)
	check := func(name string, rc int32) {
		t.Helper()
		if rc != 0 {
			t.Errorf("%s: %d: %s", name, rc, cLastError(t))
		}
		if got := cLive(t); got != base {
			t.Errorf("%s: %d structs live, want %d", name, got, base)
		}
	}
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	for _, withNulls := range []bool{false, true} {
		ccall(t, "ct_make_int32", addr(s), addr(a), 100, boolArg(withNulls))
		check("ct_check_int32", ccall(t, "ct_check_int32", addr(s), addr(a), 100, boolArg(withNulls)))
	}
	ccall(t, "ct_make_utf8", addr(s), addr(a), 50)
	check("ct_check_utf8", ccall(t, "ct_check_utf8", addr(s), addr(a), 50))

	cols, _ := ffi.CString(recordColumns)
	defer ffi.Free(cols)
	ccall(t, "ct_make_record_batch", addr(s), addr(a), 20)
	check("ct_check_record_batch", ccall(t, "ct_check_record_batch", addr(s), addr(a), uintptr(cols), 20))

	da := testsupport.OffHeap[abi.DeviceArray](t)
	ccall(t, "ct_make_device_array_cpu", addr(s), addr(da))
	check("ct_check_device_array_cpu", ccall(t, "ct_check_device_array_cpu", addr(s), addr(da), 10, 1))

	// A mismatch is reported, and the checker still releases what it got.
	ccall(t, "ct_make_int32", addr(s), addr(a), 10, 0)
	if rc := ccall(t, "ct_check_int32", addr(s), addr(a), 10, 1); rc == 0 || cLastError(t) == "" {
		t.Errorf("ct_check_int32 accepted wrong data (rc %d)", rc)
	}
	if got := cLive(t); got != base {
		t.Errorf("failed check left %d structs live, want %d", got, base)
	}

	sum := testsupport.OffHeap[abi.Array](t) // 8 bytes of C memory are enough for the int64
	ccall(t, "ct_make_struct", addr(s), addr(a), 10)
	releaseSchemaC(s)
	out := testsupport.OffHeap[abi.Array](t)
	check("ct_move_child_and_release", ccall(t, "ct_move_child_and_release", addr(a), 0, addr(out), addr(sum)))
	if got := *(*int64)(unsafe.Pointer(sum)); got != 0+2+4+6+8 {
		t.Errorf("sum %d, want 20", got)
	}
}

// ---- import: C produces, Go consumes ---------------------------------

// importNoPanic turns an importer panic into a test failure.
func importNoPanic(t *testing.T, a *abi.Array, s *abi.Schema, opts ...cdevice.ImportOption) (arr arrow.Array, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("ImportArray panicked: %v", p)
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return cdevice.ImportArray(a, s, opts...)
}

// contentOnly are the malformed cases whose fault lies in buffer contents
// that only full validation reads (O(length)); the default import checks
// structure in constant time per node, as nanoarrow's default level does.
var contentOnly = map[string]bool{
	"utf8_decreasing_offsets":       true,
	"dictionary_index_out_of_range": true,
	"ree_run_ends_not_increasing":   true,
}

// ---- export: Go produces, C consumes ---------------------------------

// checkExportsReleased asserts that C released everything Go exported.
func checkExportsReleased(t *testing.T, before int64) {
	t.Helper()
	if got := cdevice.LiveLeaks().Exports(); got != before {
		t.Errorf("%d exports live after C released them, want %d", got, before)
	}
}
