package cai_test

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/tensor"
)

var ctx = context.Background()

func fromJSON(t testing.TB, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("%v %s: %v", dt, js, err)
	}
	return a
}

func toDevice(t testing.TB, a arrow.Array, dev device.Device) *cdevice.DeviceArray {
	t.Helper()
	da, err := cdevice.CopyToDevice(ctx, a, dev)
	if err != nil {
		t.Fatal(err)
	}
	return da
}

func toHost(t testing.TB, da *cdevice.DeviceArray) arrow.Array {
	t.Helper()
	h, err := da.ToHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Release)
	return h
}

func export(t testing.TB, da *cdevice.DeviceArray, opts ...cai.ExportOption) *cai.Exported {
	t.Helper()
	e, err := cai.Export(ctx, da, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Interface.Validate(); err != nil {
		t.Fatalf("Export made an invalid descriptor: %v", err)
	}
	return e
}

// roundTrip exports da, imports the descriptor on dev with the export as
// its owner, and returns the imported array copied to the host.
func roundTrip(t testing.TB, da *cdevice.DeviceArray, dev device.Device) (cai.Interface, arrow.Array) {
	t.Helper()
	e := export(t, da)
	desc := e.Interface
	back, err := cai.Import(ctx, &desc, cai.WithDevice(dev), cai.WithOwner(e))
	if err != nil {
		e.Release()
		t.Fatal(err)
	}
	defer back.Release()
	return desc, toHost(t, back)
}

// devBytes copies b to new memory of dev, freed when the test ends.
func devBytes(t testing.TB, dev device.Device, b []byte) uintptr {
	t.Helper()
	p, err := dev.Alloc(max(len(b), 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Free(p) })
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := dev.CopyToDevice(p, 0, b, s); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	return uintptr(p)
}

func le64(vs ...int64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.NativeEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func le32(vs ...int32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.NativeEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// primitiveCases are the types that export zero-copy (and boolean, which
// does not), with values including nulls.
func primitiveCases() []struct {
	dt arrow.DataType
	js string
} {
	ints := `[1, null, -3, 4, 5, null, 7]`
	uints := `[1, null, 3, 250, 5, null, 7]`
	return []struct {
		dt arrow.DataType
		js string
	}{
		{arrow.PrimitiveTypes.Int8, ints}, {arrow.PrimitiveTypes.Int16, ints},
		{arrow.PrimitiveTypes.Int32, ints}, {arrow.PrimitiveTypes.Int64, `[1, null, -3, 4, 9007199254740993, null, 7]`},
		{arrow.PrimitiveTypes.Uint8, uints}, {arrow.PrimitiveTypes.Uint16, uints},
		{arrow.PrimitiveTypes.Uint32, uints}, {arrow.PrimitiveTypes.Uint64, uints},
		{arrow.FixedWidthTypes.Float16, `[1.5, null, -3, 4, 0.25, null, 7]`},
		{arrow.PrimitiveTypes.Float32, `[1.5, null, -3.25, 4, 5e30, null, 7]`},
		{arrow.PrimitiveTypes.Float64, `[1.5, null, -3.25, 4, 5e300, null, 7]`},
		{&arrow.TimestampType{Unit: arrow.Second}, `[1, null, 3, 4, 5, null, 7]`},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, `[1, null, 3, 4, 5, null, 7]`},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, `[1, null, 3, 4, 5, null, 7]`},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, `[1, null, 3, 4, 5, null, 7]`},
		{&arrow.DurationType{Unit: arrow.Second}, ints}, {&arrow.DurationType{Unit: arrow.Millisecond}, ints},
		{&arrow.DurationType{Unit: arrow.Microsecond}, ints}, {&arrow.DurationType{Unit: arrow.Nanosecond}, ints},
		{arrow.FixedWidthTypes.Boolean, `[true, null, false, true, true, null, false]`},
	}
}

// testPrimitives round-trips every primitive type, with and without nulls,
// whole and sliced (offset), on dev.
func testPrimitives(t *testing.T, dev device.Device) {
	for _, c := range primitiveCases() {
		full := fromJSON(t, c.dt, c.js)
		defer full.Release()
		noNulls := fromJSON(t, c.dt, strings.ReplaceAll(c.js, "null", "0"))
		defer noNulls.Release()
		if c.dt.ID() == arrow.BOOL {
			noNulls.Release()
			noNulls = fromJSON(t, c.dt, strings.ReplaceAll(c.js, "null", "false"))
		}
		for _, v := range []struct {
			name string
			a    arrow.Array
		}{
			{"nulls", full}, {"no nulls", noNulls},
			{"sliced", array.NewSlice(full, 2, 6)}, {"sliced without nulls", array.NewSlice(full, 2, 5)},
			{"empty", array.NewSlice(full, 3, 3)},
		} {
			t.Run(c.dt.String()+"/"+v.name, func(t *testing.T) {
				da := toDevice(t, v.a, dev)
				defer da.Release()
				e := export(t, da)
				d := e.Interface
				ts, _ := cai.Typestr(c.dt)
				if !slices.Equal(d.Shape, []int64{int64(v.a.Len())}) || d.Typestr != ts || d.Version != 3 ||
					!d.Data.ReadOnly || d.Strides != nil || d.Stream != nil || !slices.Equal(d.Descr, []cai.Field{{"", ts}}) {
					t.Errorf("descriptor %+v", d)
				}
				if (d.Mask != nil) != (v.a.NullN() > 0) {
					t.Errorf("mask %v for %d nulls", d.Mask, v.a.NullN())
				}
				switch {
				case v.a.Len() == 0:
					if d.Data.Ptr != 0 {
						t.Errorf("pointer %#x for no elements", d.Data.Ptr)
					}
				case c.dt.ID() != arrow.BOOL:
					// Zero-copy: the values buffer, offset elements in.
					item := int64(c.dt.(arrow.FixedWidthDataType).BitWidth() / 8)
					if want := uintptr(da.Buffers[1].Ptr) + uintptr(int64(v.a.Data().Offset())*item); d.Data.Ptr != want {
						t.Errorf("pointer %#x, want %#x", d.Data.Ptr, want)
					}
				}
				back, err := cai.Import(ctx, &d, cai.WithDevice(dev), cai.WithOwner(e))
				if err != nil {
					e.Release()
					t.Fatal(err)
				}
				defer back.Release()
				if v.a.Len() > 0 && c.dt.ID() != arrow.BOOL && uintptr(back.Buffers[1].Ptr) != d.Data.Ptr {
					t.Error("the import copied the values")
				}
				got := toHost(t, back)
				if !array.Equal(got, v.a) {
					t.Errorf("round trip:\nwant %v\ngot  %v", v.a, got)
				}
			})
		}
	}
}

func TestPrimitivesFake(t *testing.T) { testPrimitives(t, fake) }

// The bytes of exported booleans and masks.
func TestExportedBytes(t *testing.T) {
	a := fromJSON(t, arrow.FixedWidthTypes.Boolean, `[true, null, false, true, false, true, true, null, true, false]`)
	defer a.Release()
	s := array.NewSlice(a, 1, 10) // bit offset 1
	defer s.Release()
	da := toDevice(t, s, fake)
	defer da.Release()
	e := export(t, da)
	defer e.Release()
	d := e.Interface
	if got := hostView(d.Data.Ptr, 9); !slices.Equal(got, []byte{0, 0, 1, 0, 1, 1, 0, 1, 0}) {
		t.Errorf("boolean bytes %v", got)
	}
	m := d.Mask
	if m == nil || m.Typestr != "|b1" || !slices.Equal(m.Shape, []int64{9}) || m.Strides != nil || !m.Data.ReadOnly || m.Stream != nil {
		t.Fatalf("mask %+v", m)
	}
	if got := hostView(m.Data.Ptr, 9); !slices.Equal(got, []byte{0, 1, 1, 1, 1, 1, 0, 1, 1}) {
		t.Errorf("mask bytes %v", got)
	}
	// WithWritable: both read-only flags false.
	w := export(t, da, cai.WithWritable())
	defer w.Release()
	if w.Interface.Data.ReadOnly || w.Interface.Mask.Data.ReadOnly {
		t.Error("WithWritable export is read-only")
	}
	// Release twice is harmless.
	w.Release()
}

//go:noinline
func hostView(p uintptr, n int) []byte {
	return slices.Clone(unsafe.Slice((*byte)(abi.Pointer(p)), n))
}

// fixed_size_list<int32, 3> with nulls at both levels: a 2-D array whose
// mask is null where the row or the element is; it comes back as a list
// whose values carry the nulls.
func TestFixedSizeList(t *testing.T) {
	dt := arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int32)
	a := fromJSON(t, dt, `[[1, 2, 3], null, [4, null, 6], [7, 8, 9], [null, 11, 12]]`)
	defer a.Release()
	// Rows 1 and 3 null over valid values (arrow-go's builder makes the
	// values of a null row null too).
	b := rowNulls(t, dt, 5, 1, 3)
	defer b.Release()
	for _, v := range []arrow.Array{a, array.NewSlice(a, 1, 5), array.NewSlice(a, 3, 4), b, array.NewSlice(b, 1, 4)} {
		defer v.Release()
		da := toDevice(t, v, fake)
		defer da.Release()
		desc, got := roundTrip(t, da, fake)
		n := v.Len()
		if !slices.Equal(desc.Shape, []int64{int64(n), 3}) || desc.Strides != nil {
			t.Errorf("shape %v strides %v", desc.Shape, desc.Strides)
		}
		fsl, ok := got.(*array.FixedSizeList)
		if !ok || !arrow.TypeEqual(fsl.DataType(), dt) || fsl.Len() != n || fsl.NullN() != 0 {
			t.Fatalf("imported %T %v", got, got)
		}
		if w, g := flatten(v), flatten(got); !slices.Equal(w, g) {
			t.Errorf("values:\nwant %v\ngot  %v", w, g)
		}
	}
}

// rowNulls makes an array of n fixed-size lists of int32 (values 0, 1, ...,
// none null) whose rows nullRows are null.
func rowNulls(t testing.TB, dt *arrow.FixedSizeListType, n int, nullRows ...int) arrow.Array {
	t.Helper()
	vb := array.NewInt32Builder(memory.DefaultAllocator)
	defer vb.Release()
	for i := range n * int(dt.Len()) {
		vb.Append(int32(i))
	}
	vals := vb.NewArray()
	defer vals.Release()
	bits := make([]byte, (n+7)/8)
	for i := range n {
		if !slices.Contains(nullRows, i) {
			bits[i/8] |= 1 << (i % 8)
		}
	}
	d := array.NewData(dt, n, []*memory.Buffer{memory.NewBufferBytes(bits)}, []arrow.ArrayData{vals.Data()}, len(nullRows), 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// flatten lists the leaf values of an array of fixed-size lists or
// tensors in storage order, "(null)" where the leaf or any list above it
// is null.
func flatten(a arrow.Array) []string {
	var out []string
	var walk func(a arrow.Array, i int, null bool)
	walk = func(a arrow.Array, i int, null bool) {
		if e, ok := a.(array.ExtensionArray); ok {
			walk(e.Storage(), i, null)
			return
		}
		null = null || a.IsNull(i)
		if l, ok := a.(*array.FixedSizeList); ok {
			n := int(l.DataType().(*arrow.FixedSizeListType).Len())
			for j := range n {
				walk(l.ListValues(), (l.Offset()+i)*n+j, null)
			}
			return
		}
		if null {
			out = append(out, "(null)")
		} else {
			out = append(out, a.ValueStr(i))
		}
	}
	for i := range a.Len() {
		walk(a, i, false)
	}
	return out
}

// Nested fixed-size lists are N-D; N-D imports as a fixed shape tensor.
func TestNestedListsToTensor(t *testing.T) {
	dt := arrow.FixedSizeListOf(3, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64))
	a := fromJSON(t, dt, `[[[1,2],[3,4],[5,6]], [[7,8],[9,10],[11,12]]]`)
	defer a.Release()
	da := toDevice(t, a, fake)
	defer da.Release()
	desc, got := roundTrip(t, da, fake)
	if !slices.Equal(desc.Shape, []int64{2, 3, 2}) {
		t.Errorf("shape %v", desc.Shape)
	}
	tt, ok := got.DataType().(*tensor.FixedShapeType)
	if !ok || !slices.Equal(tt.Shape(), []int64{3, 2}) || tt.Permutation() != nil || got.Len() != 2 {
		t.Fatalf("imported as %v", got.DataType())
	}
	vals := got.(array.ExtensionArray).Storage().(*array.FixedSizeList).ListValues().(*array.Float64).Float64Values()
	if !slices.Equal(vals, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}) {
		t.Errorf("values %v", vals)
	}
}

func tensorArray(t testing.TB, tt *tensor.FixedShapeType, rows int, nullEvery int) arrow.Array {
	t.Helper()
	n := int(tt.StorageType().(*arrow.FixedSizeListType).Len())
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, int32(n), tt.ValueType())
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int32Builder)
	for r := range rows {
		b.Append(true)
		for i := range n {
			if nullEvery > 0 && (r*n+i)%nullEvery == 0 {
				vb.AppendNull()
			} else {
				vb.Append(int32(r*1000 + i))
			}
		}
	}
	st := b.NewArray()
	defer st.Release()
	return array.NewExtensionArrayWithStorage(tt, st)
}

// A fixed shape tensor with a permutation exports with strides, and those
// strides import back as the same permuted tensor, zero-copy; its mask
// has the same strides.
func TestTensorPermutation(t *testing.T) {
	tt, err := tensor.NewFixedShapeType(arrow.PrimitiveTypes.Int32, []int64{2, 3, 4}, []int64{2, 0, 1}, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tt.LogicalShape(), []int64{4, 2, 3}) {
		t.Fatalf("logical shape %v", tt.LogicalShape())
	}
	for _, nullEvery := range []int{0, 5} {
		a := tensorArray(t, tt, 3, nullEvery)
		defer a.Release()
		da := toDevice(t, a, fake)
		defer da.Release()
		e := export(t, da)
		d := e.Interface
		// Physical row-major strides of (3, 2, 3, 4) int32 are (96, 48, 16, 4);
		// logical dimension i is physical permutation[i].
		if !slices.Equal(d.Shape, []int64{3, 4, 2, 3}) || !slices.Equal(d.Strides, []int64{96, 4, 48, 16}) {
			t.Errorf("shape %v strides %v", d.Shape, d.Strides)
		}
		if nullEvery > 0 && (d.Mask == nil || !slices.Equal(d.Mask.Strides, []int64{24, 1, 12, 4})) {
			t.Errorf("mask %+v", d.Mask)
		}
		back, err := cai.Import(ctx, &d, cai.WithDevice(fake), cai.WithOwner(e))
		if err != nil {
			e.Release()
			t.Fatal(err)
		}
		defer back.Release()
		bt, ok := back.Type.(*tensor.FixedShapeType)
		if !ok || !slices.Equal(bt.Shape(), []int64{2, 3, 4}) || !slices.Equal(bt.Permutation(), []int64{2, 0, 1}) {
			t.Fatalf("imported as %v", back.Type)
		}
		if uintptr(back.Children[0].Buffers[1].Ptr) != d.Data.Ptr {
			t.Error("the permuted tensor was copied")
		}
		got := toHost(t, back)
		gs := got.(array.ExtensionArray).Storage()
		ws := a.(array.ExtensionArray).Storage()
		if !array.Equal(gs, ws) {
			t.Errorf("storage:\nwant %v\ngot  %v", ws, gs)
		}
	}
}

// Descriptors written by hand: strided, reversed, column-major, masks.
func TestImportStrided(t *testing.T) {
	p := devBytes(t, fake, le32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
	i32 := ne + "i4"
	imp := func(d cai.Interface, opts ...cai.ImportOption) (arrow.Array, error) {
		t.Helper()
		da, err := cai.Import(ctx, &d, append(opts, cai.WithDevice(fake))...)
		if err != nil {
			return nil, err
		}
		defer da.Release()
		return toHost(t, da), nil
	}
	int32s := func(a arrow.Array) []int32 {
		switch a := a.(type) {
		case *array.Int32:
			return a.Int32Values()
		case *array.FixedSizeList:
			return a.ListValues().(*array.Int32).Int32Values()
		case array.ExtensionArray:
			return a.Storage().(*array.FixedSizeList).ListValues().(*array.Int32).Int32Values()
		}
		t.Fatalf("a %T", a)
		return nil
	}
	cases := []struct {
		name string
		d    cai.Interface
		want []int32
	}{
		{"every other", cai.Interface{Shape: []int64{6}, Strides: []int64{8}}, []int32{0, 2, 4, 6, 8, 10}},
		{"reversed", cai.Interface{Shape: []int64{4}, Strides: []int64{-4}, Data: cai.Data{Ptr: p + 12}}, []int32{3, 2, 1, 0}},
		{"column-major", cai.Interface{Shape: []int64{3, 4}, Strides: []int64{4, 12}}, []int32{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}},
		{"row stride", cai.Interface{Shape: []int64{2, 3}, Strides: []int64{24, 4}}, []int32{0, 1, 2, 6, 7, 8}},
		{"broadcast", cai.Interface{Shape: []int64{3, 2}, Strides: []int64{0, 4}}, []int32{0, 1, 0, 1, 0, 1}},
		{"3-D partly permuted", cai.Interface{Shape: []int64{2, 2, 3}, Strides: []int64{4, 24, 8}}, []int32{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}},
	}
	for _, c := range cases {
		d := c.d
		d.Typestr, d.Version = i32, 3
		if d.Data.Ptr == 0 {
			d.Data.Ptr = p
		}
		if _, err := imp(d); !errors.Is(err, cai.ErrUnsupported) || !strings.Contains(err.Error(), "WithAllowCopy") {
			t.Errorf("%s without WithAllowCopy: %v", c.name, err)
		}
		got, err := imp(d, cai.WithAllowCopy())
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v := int32s(got); !slices.Equal(v, c.want) {
			t.Errorf("%s: %v, want %v", c.name, v, c.want)
		}
	}
	// Explicit strides that are the row-major ones, and strides of
	// dimensions of one element, are zero-copy.
	for _, d := range []cai.Interface{
		{Shape: []int64{3, 4}, Strides: []int64{16, 4}},
		{Shape: []int64{1, 12}, Strides: []int64{999, 4}},
		{Shape: []int64{12, 1}, Strides: []int64{4, -8}},
		{Shape: []int64{0, 5}, Strides: []int64{3, 7}},
	} {
		d.Typestr, d.Version, d.Data.Ptr = i32, 3, p
		da, err := cai.Import(ctx, &d, cai.WithDevice(fake))
		if err != nil {
			t.Errorf("%v %v: %v", d.Shape, d.Strides, err)
			continue
		}
		if d.Len() > 0 && uintptr(da.Children[0].Buffers[1].Ptr) != p {
			t.Errorf("%v %v was copied", d.Shape, d.Strides)
		}
		da.Release()
	}
	// No lists; lists of no elements, which arrow-go cannot make.
	for _, shape := range [][]int64{{0, 4}, {0, 2, 3}, {0}} {
		d := cai.Interface{Shape: shape, Typestr: i32, Version: 3}
		got, err := imp(d)
		if err != nil || got.Len() != 0 {
			t.Errorf("shape %v: %v, %v", shape, got, err)
		}
	}
	for _, shape := range [][]int64{{3, 0}, {2, 0, 5}, {0, 0}} {
		d := cai.Interface{Shape: shape, Typestr: i32, Version: 3}
		if _, err := imp(d); !errors.Is(err, cai.ErrUnsupported) {
			t.Errorf("shape %v: %v", shape, err)
		}
	}
	// A 3-D array whose rows are permuted dense tensors is zero-copy; one
	// with a dimension of one element is copied.
	d := cai.Interface{Shape: []int64{1, 3, 4}, Strides: []int64{48, 4, 12}, Typestr: i32, Version: 3, Data: cai.Data{Ptr: p}}
	da, err := cai.Import(ctx, &d, cai.WithDevice(fake))
	if err != nil {
		t.Fatal(err)
	}
	tt := da.Type.(*tensor.FixedShapeType)
	if !slices.Equal(tt.Shape(), []int64{4, 3}) || !slices.Equal(tt.Permutation(), []int64{1, 0}) ||
		uintptr(da.Children[0].Buffers[1].Ptr) != p {
		t.Errorf("imported %v", tt)
	}
	da.Release()
}

func TestImportMasks(t *testing.T) {
	vals := devBytes(t, fake, le64(10, 11, 12, 13, 14, 15))
	i64 := ne + "i8"
	for _, c := range []struct {
		name string
		mask cai.Interface
		b    []byte
		want string
	}{
		{"bool mask", cai.Interface{Typestr: "|b1"}, []byte{1, 0, 1, 1, 0, 1}, `[10, null, 12, 13, null, 15]`},
		{"byte mask", cai.Interface{Typestr: "|u1"}, []byte{255, 7, 0, 1, 2, 0}, `[10, 11, null, 13, 14, null]`},
		{"strided mask", cai.Interface{Typestr: "|u1", Strides: []int64{2}}, []byte{1, 9, 0, 9, 1, 9, 1, 9, 0, 9, 1, 9}, `[10, null, 12, 13, null, 15]`},
		{"all valid", cai.Interface{Typestr: "|b1"}, []byte{1, 1, 1, 1, 1, 1}, `[10, 11, 12, 13, 14, 15]`},
	} {
		m := c.mask
		m.Shape, m.Version, m.Data.Ptr = []int64{6}, 3, devBytes(t, fake, c.b)
		d := cai.Interface{Shape: []int64{6}, Typestr: i64, Version: 3, Data: cai.Data{Ptr: vals}, Mask: &m}
		da, err := cai.Import(ctx, &d, cai.WithDevice(fake))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := fromJSON(t, arrow.PrimitiveTypes.Int64, c.want)
		if got := toHost(t, da); !array.Equal(got, want) || da.NullCount != int64(want.NullN()) {
			t.Errorf("%s: %v (%d nulls), want %v", c.name, got, da.NullCount, want)
		}
		if c.name == "all valid" && da.Buffers[0].Ptr != 0 {
			t.Errorf("%s: a validity bitmap without nulls", c.name)
		}
		want.Release()
		da.Release()
	}
	// Booleans from bytes (any non-zero is true), strided, with a mask.
	b := devBytes(t, fake, []byte{1, 0, 0, 0, 7, 0, 1, 0, 0, 0})
	d := cai.Interface{Shape: []int64{5}, Strides: []int64{2}, Typestr: "|b1", Version: 3, Data: cai.Data{Ptr: b},
		Mask: &cai.Interface{Shape: []int64{5}, Typestr: "|b1", Version: 3, Data: cai.Data{Ptr: devBytes(t, fake, []byte{1, 1, 0, 1, 1})}}}
	da, err := cai.Import(ctx, &d, cai.WithDevice(fake))
	if err != nil {
		t.Fatal(err)
	}
	defer da.Release()
	want := fromJSON(t, arrow.FixedWidthTypes.Boolean, `[true, false, null, true, false]`)
	defer want.Release()
	if got := toHost(t, da); !array.Equal(got, want) {
		t.Errorf("booleans %v, want %v", got, want)
	}
	// A 2-D mask is the list values' validity.
	m2 := cai.Interface{Shape: []int64{2, 3}, Typestr: "|b1", Version: 3, Data: cai.Data{Ptr: devBytes(t, fake, []byte{1, 0, 1, 1, 1, 0})}}
	d2 := cai.Interface{Shape: []int64{2, 3}, Typestr: i64, Version: 3, Data: cai.Data{Ptr: vals}, Mask: &m2}
	da2, err := cai.Import(ctx, &d2, cai.WithDevice(fake))
	if err != nil {
		t.Fatal(err)
	}
	defer da2.Release()
	got := toHost(t, da2).(*array.FixedSizeList)
	wantVals := fromJSON(t, arrow.PrimitiveTypes.Int64, `[10, null, 12, 13, 14, null]`)
	defer wantVals.Release()
	if got.NullN() != 0 || !array.Equal(got.ListValues(), wantVals) {
		t.Errorf("2-D masked: %v", got)
	}
}

func TestImportRefusals(t *testing.T) {
	p := devBytes(t, fake, make([]byte, 64))
	base := func() cai.Interface {
		return cai.Interface{Shape: []int64{4}, Typestr: ne + "f8", Version: 3, Data: cai.Data{Ptr: p}}
	}
	cases := []struct {
		name   string
		change func(d *cai.Interface)
		opts   []cai.ImportOption
		want   error
	}{
		{"0-d", func(d *cai.Interface) { d.Shape = []int64{} }, nil, cai.ErrUnsupported},
		{"complex", func(d *cai.Interface) { d.Typestr = ne + "c16" }, nil, cai.ErrUnsupported},
		{"other byte order", func(d *cai.Interface) { d.Typestr = other + "f8" }, nil, cai.ErrUnsupported},
		{"structured", func(d *cai.Interface) { d.Descr = []cai.Field{{"x", ne + "f4"}, {"y", ne + "f4"}} }, nil, cai.ErrUnsupported},
		{"named field", func(d *cai.Interface) { d.Descr = []cai.Field{{"x", ne + "f8"}} }, nil, cai.ErrUnsupported},
		{"descr of another type", func(d *cai.Interface) { d.Descr = []cai.Field{{"", ne + "i8"}} }, nil, cai.ErrInvalid},
		{"invalid", func(d *cai.Interface) { d.Data.Ptr = 0 }, nil, cai.ErrInvalid},
		{"stream 0", func(d *cai.Interface) { d.Stream = ptr(0) }, nil, cai.ErrInvalid},
		{"CPU device", nil, []cai.ImportOption{cai.WithDevice(device.CPU)}, cai.ErrNotCUDA},
		{"dimension too long", func(d *cai.Interface) { d.Shape = []int64{0, 1 << 31} }, nil, cai.ErrUnsupported},
		{"bad owner", nil, []cai.ImportOption{cai.WithOwner(42)}, cai.ErrInvalid},
		{"nil owner", nil, []cai.ImportOption{cai.WithOwner(nil)}, cai.ErrInvalid},
		{"nil func owner", nil, []cai.ImportOption{cai.WithOwner((func())(nil))}, cai.ErrInvalid},
		{"no stream waiter", func(d *cai.Interface) { d.Stream = ptr(9) }, []cai.ImportOption{cai.WithDevice(noWaiter{device.CPU})}, cai.ErrUnsupported},
	}
	for _, c := range cases {
		d := base()
		if c.change != nil {
			c.change(&d)
		}
		da, err := cai.Import(ctx, &d, append([]cai.ImportOption{cai.WithDevice(fake)}, c.opts...)...)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if da != nil {
			da.Release()
		}
	}
	if _, err := cai.Import(ctx, nil); !errors.Is(err, cai.ErrInvalid) {
		t.Errorf("nil descriptor: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	d := base()
	if _, err := cai.Import(canceled, &d, cai.WithDevice(fake)); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// The owner is released exactly once, after the last reference; never
// when Import fails.
func TestImportOwner(t *testing.T) {
	p := devBytes(t, fake, le64(1, 2, 3))
	d := cai.Interface{Shape: []int64{3}, Typestr: ne + "i8", Version: 3, Data: cai.Data{Ptr: p}}
	calls := 0
	da, err := cai.Import(ctx, &d, cai.WithDevice(fake), cai.WithOwner(func() { calls++ }))
	if err != nil {
		t.Fatal(err)
	}
	da.Retain()
	da.Release()
	if calls != 0 {
		t.Fatal("owner released while referenced")
	}
	da.Release()
	if calls != 1 {
		t.Fatalf("owner released %d times", calls)
	}
	r := &releaser{}
	da, err = cai.Import(ctx, &d, cai.WithDevice(fake), cai.WithOwner(r))
	if err != nil {
		t.Fatal(err)
	}
	da.Release()
	if r.n != 1 {
		t.Errorf("Release called %d times", r.n)
	}
	bad := d
	bad.Typestr = ne + "c8"
	if _, err := cai.Import(ctx, &bad, cai.WithDevice(fake), cai.WithOwner(r)); err == nil || r.n != 1 {
		t.Errorf("failed import: %v, owner released %d times", err, r.n)
	}
}

type releaser struct{ n int }

func (r *releaser) Release() { r.n++ }

// The stream rules, as the device is asked to wait.
func TestImportStreams(t *testing.T) {
	p := devBytes(t, fake, le64(1, 2, 3, 4))
	mp := devBytes(t, fake, []byte{1, 0, 1, 1})
	consumer, _ := fake.NewStream()
	h := consumer.Handle()
	cases := []struct {
		name       string
		stream     *int64
		maskStream *int64
		mask       bool
		opts       []cai.ImportOption
		want       []wait
	}{
		{"none", nil, nil, false, nil, nil},
		{"legacy: the NULL stream", ptr(1), nil, false, nil, []wait{{0, 0}}},
		{"per-thread", ptr(2), nil, false, nil, []wait{{2, 0}}},
		{"handle", ptr(0x7f00dead), nil, false, nil, []wait{{0x7f00dead, 0}}},
		{"consumer stream", ptr(0x7f00dead), nil, false, []cai.ImportOption{cai.WithConsumerStream(consumer)}, []wait{{0x7f00dead, h}}},
		{"consumer stream, but a mask to copy", ptr(77), nil, true, []cai.ImportOption{cai.WithConsumerStream(consumer)}, []wait{{77, 0}}},
		{"mask on the same stream", ptr(77), ptr(77), true, nil, []wait{{77, 0}}},
		{"mask on another stream", ptr(77), ptr(1), true, nil, []wait{{77, 0}, {0, 0}}},
		{"mask stream only", nil, ptr(2), true, nil, []wait{{2, 0}}},
		{"ignored", ptr(77), ptr(1), true, []cai.ImportOption{cai.WithIgnoreStream()}, nil},
	}
	for _, c := range cases {
		d := cai.Interface{Shape: []int64{4}, Typestr: ne + "i8", Version: 3, Data: cai.Data{Ptr: p}, Stream: c.stream}
		if c.mask {
			d.Mask = &cai.Interface{Shape: []int64{4}, Typestr: "|b1", Version: 3, Data: cai.Data{Ptr: mp}, Stream: c.maskStream}
		}
		fake.takeWaits()
		da, err := cai.Import(ctx, &d, append([]cai.ImportOption{cai.WithDevice(fake)}, c.opts...)...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		da.Release()
		if got := fake.takeWaits(); !slices.Equal(got, c.want) {
			t.Errorf("%s: waits %v, want %v", c.name, got, c.want)
		}
	}
	// Stream 0 is refused before anything is waited for.
	d := cai.Interface{Shape: []int64{4}, Typestr: ne + "i8", Version: 3, Data: cai.Data{Ptr: p}, Stream: ptr(0)}
	if _, err := cai.Import(ctx, &d, cai.WithDevice(fake)); !errors.Is(err, cai.ErrInvalid) || len(fake.takeWaits()) != 0 {
		t.Errorf("stream 0: %v", err)
	}
	// A failed wait fails the import, and releases nothing it was given.
	fake.waitErr = errors.New("boom")
	defer func() { fake.waitErr = nil }()
	d.Stream = ptr(5)
	r := &releaser{}
	if _, err := cai.Import(ctx, &d, cai.WithDevice(fake), cai.WithOwner(r)); err == nil || !strings.Contains(err.Error(), "boom") || r.n != 0 {
		t.Errorf("failed wait: %v (owner released %d times)", err, r.n)
	}
	fake.takeWaits()
}

func TestExportStream(t *testing.T) {
	a := fromJSON(t, arrow.FixedWidthTypes.Boolean, `[true, null, false]`)
	defer a.Release()
	da := toDevice(t, a, fake)
	defer da.Release()
	s, _ := fake.NewStream()
	e := export(t, da, cai.WithStream(s))
	defer e.Release()
	if d := e.Interface; d.Stream == nil || *d.Stream != int64(s.Handle()) || d.Mask == nil || d.Mask.Stream != nil {
		t.Errorf("stream %v, mask %+v", d.Stream, d.Mask)
	}
	// An importer synchronizes with it.
	d := e.Interface
	fake.takeWaits()
	back, err := cai.Import(ctx, &d, cai.WithDevice(fake))
	if err != nil {
		t.Fatal(err)
	}
	back.Release()
	if w := fake.takeWaits(); !slices.Equal(w, []wait{{s.Handle(), 0}}) {
		t.Errorf("waits %v", w)
	}
	if _, err := cai.Export(ctx, da, cai.WithStream(fakeStream{h: 0})); !errors.Is(err, cai.ErrInvalid) {
		t.Errorf("stream handle 0: %v", err)
	}
}

func TestExportRefusals(t *testing.T) {
	str := fromJSON(t, arrow.BinaryTypes.String, `["a"]`)
	defer str.Release()
	tz := fromJSON(t, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, `[1]`)
	defer tz.Release()
	lst := fromJSON(t, arrow.FixedSizeListOf(2, arrow.BinaryTypes.String), `[["a", "b"]]`)
	defer lst.Release()
	for _, a := range []arrow.Array{str, tz, lst} {
		da := toDevice(t, a, fake)
		if _, err := cai.Export(ctx, da); !errors.Is(err, cai.ErrUnsupported) {
			t.Errorf("%v: %v", a.DataType(), err)
		}
		da.Release()
	}
	// CPU memory is not CUDA memory, unless a test says so.
	f := fromJSON(t, arrow.PrimitiveTypes.Float64, `[1, null, 3]`)
	defer f.Release()
	cpu := toDevice(t, f, device.CPU)
	defer cpu.Release()
	if _, err := cai.Export(ctx, cpu); !errors.Is(err, cai.ErrNotCUDA) || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("CPU array: %v", err)
	}
	restore := cai.AllowAnyDevice()
	desc, got := roundTrip(t, cpu, device.CPU)
	restore()
	if !array.Equal(got, f) || desc.Mask == nil {
		t.Errorf("CPU round trip through the test seam: %v", got)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cai.Export(canceled, cpu); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	if _, err := cai.Export(ctx, nil); !errors.Is(err, cai.ErrInvalid) {
		t.Errorf("nil: %v", err)
	}
	// An array whose buffers are too small for what it says.
	i := fromJSON(t, arrow.PrimitiveTypes.Int64, `[1, 2, 3]`)
	defer i.Release()
	da := toDevice(t, i, fake)
	defer da.Release()
	lying := cdevice.NewDeviceArray(cdevice.DeviceArray{Type: da.Type, Length: 4, Buffers: da.Buffers,
		DeviceType: da.DeviceType, DeviceID: da.DeviceID, Device: da.Device}, nil)
	defer lying.Release()
	if _, err := cai.Export(ctx, lying); !errors.Is(err, cai.ErrInvalid) {
		t.Errorf("short buffer: %v", err)
	}
	// No backend: zero-copy export works, conversions cannot read.
	blind := cdevice.NewDeviceArray(cdevice.DeviceArray{Type: da.Type, Length: 3, Buffers: da.Buffers,
		DeviceType: abi.DeviceCUDA, DeviceID: 5}, nil)
	defer blind.Release()
	e, err := cai.Export(ctx, blind)
	if err != nil || e.Interface.Data.Ptr != uintptr(da.Buffers[1].Ptr) {
		t.Errorf("metadata-only export: %v", err)
	}
	e.Release()
	bf := fromJSON(t, arrow.FixedWidthTypes.Boolean, `[true]`)
	defer bf.Release()
	bda := toDevice(t, bf, fake)
	defer bda.Release()
	blindBool := cdevice.NewDeviceArray(cdevice.DeviceArray{Type: bda.Type, Length: 1, Buffers: bda.Buffers,
		DeviceType: abi.DeviceCUDA, DeviceID: 5}, nil)
	defer blindBool.Release()
	if _, err := cai.Export(ctx, blindBool); !errors.Is(err, cdevice.ErrNotReadable) {
		t.Errorf("booleans without a backend: %v", err)
	}
}

// Internals: contiguity and permuted layouts.
func TestStridedLayouts(t *testing.T) {
	if !cai.Contiguous([]int64{2, 1, 3}, []int64{24, 5, 8}, 8) || cai.Contiguous([]int64{2, 3}, []int64{8, 16}, 8) {
		t.Error("contiguous")
	}
	if _, _, ok := cai.Permuted([]int64{2, 3, 4}, []int64{96, 4, 12}, 4); ok {
		t.Error("rows of the wrong stride matched")
	}
	if phys, perm, ok := cai.Permuted([]int64{2, 3, 4}, []int64{48, 4, 12}, 4); !ok || !slices.Equal(phys, []int64{4, 3}) || !slices.Equal(perm, []int64{1, 0}) {
		t.Errorf("permuted %v %v %v", phys, perm, ok)
	}
}

// The CUDA Array Interface is CUDA's: an array in HIP memory (chipStar on
// PoCL in CI) is refused with ErrNotCUDA naming its device, and a HIP
// device is refused as the import's device; ROCm arrays go through DLPack
// (kDLROCM), whose stream rules dlpack's TestConsumerStream checks on it.
func TestROCmIsNotCUDA(t *testing.T) {
	dev := testsupport.BackendDevice(t, "hip")
	f := fromJSON(t, arrow.PrimitiveTypes.Float64, `[1, null, 3]`)
	defer f.Release()
	da := toDevice(t, f, dev)
	defer da.Release()
	if _, err := cai.Export(ctx, da); !errors.Is(err, cai.ErrNotCUDA) || !strings.Contains(err.Error(), "rocm") {
		t.Errorf("HIP array: %v; want ErrNotCUDA naming rocm", err)
	}
}
