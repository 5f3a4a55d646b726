package tensor_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/tensor"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var f32 = arrow.PrimitiveTypes.Float32

// The specification's example: shape [100, 200, 500], permutation [2, 0, 1]
// is a logical [500, 100, 200].
func TestSerialize(t *testing.T) {
	tt, err := tensor.NewFixedShapeType(f32, []int64{100, 200, 500}, []int64{2, 0, 1}, []string{"C", "H", "W"})
	must(t, err)
	if got := tt.Serialize(); got != `{"shape":[100,200,500],"dim_names":["C","H","W"],"permutation":[2,0,1]}` {
		t.Errorf("Serialize = %s", got)
	}
	if got := tt.LogicalShape(); !slices.Equal(got, []int64{500, 100, 200}) {
		t.Errorf("logical shape %v", got)
	}
	if st := tt.StorageType().(*arrow.FixedSizeListType); st.Len() != 100*200*500 || !arrow.TypeEqual(st.Elem(), f32) {
		t.Errorf("storage %s", st)
	}
	if tt.ExtensionName() != "arrow.fixed_shape_tensor" || !strings.Contains(tt.String(), "permutation=[2 0 1]") ||
		!strings.Contains(tt.String(), "dim_names=[C,H,W]") {
		t.Errorf("%s: %s", tt.ExtensionName(), tt)
	}
	plain, err := tensor.NewFixedShapeType(f32, []int64{2, 5}, nil, nil)
	must(t, err)
	if got := plain.Serialize(); got != `{"shape":[2,5]}` {
		t.Errorf("Serialize = %s", got)
	}
	// No shape is a 0-d tensor per row: one value.
	scalar, err := tensor.NewFixedShapeType(f32, nil, nil, nil)
	must(t, err)
	if got := scalar.Serialize(); got != `{"shape":[]}` || scalar.StorageType().(*arrow.FixedSizeListType).Len() != 1 {
		t.Errorf("0-d: %s, %s", got, scalar.StorageType())
	}

	// Round trips, and the accessors hand out copies.
	for _, x := range []*tensor.FixedShapeType{tt, plain, scalar} {
		back, err := x.Deserialize(x.StorageType(), x.Serialize())
		must(t, err)
		if !arrow.TypeEqual(back, x) || back.(*tensor.FixedShapeType).Serialize() != x.Serialize() {
			t.Errorf("Deserialize: %s, want %s", back, x)
		}
	}
	tt.Shape()[0], tt.Permutation()[0], tt.DimNames()[0] = 7, 7, "x"
	if !slices.Equal(tt.Shape(), []int64{100, 200, 500}) || tt.Permutation()[0] != 2 || tt.DimNames()[0] != "C" {
		t.Error("an accessor gave out the type's own slice")
	}
	// Metadata with spaces, as other implementations write it.
	back, err := tt.Deserialize(tt.StorageType(), `{ "shape": [100, 200, 500], "dim_names": ["C", "H", "W"], "permutation": [2, 0, 1] }`)
	must(t, err)
	if !arrow.TypeEqual(back, tt) {
		t.Errorf("%s", back)
	}
	// The storage's own field name and nullability stay.
	st := arrow.FixedSizeListOfNonNullable(10, f32)
	back, err = plain.Deserialize(st, plain.Serialize())
	must(t, err)
	if back.StorageType() != st {
		t.Errorf("storage %s", back.StorageType())
	}
}

func TestEquality(t *testing.T) {
	mk := func(value arrow.DataType, shape, perm []int64, names []string) *tensor.FixedShapeType {
		t.Helper()
		tt, err := tensor.NewFixedShapeType(value, shape, perm, names)
		must(t, err)
		return tt
	}
	base := mk(f32, []int64{2, 3}, nil, nil)
	// An identity permutation is none.
	id := mk(f32, []int64{2, 3}, []int64{0, 1}, nil)
	if !arrow.TypeEqual(id, base) || id.Permutation() != nil || id.Serialize() != `{"shape":[2,3]}` {
		t.Errorf("identity permutation: %s %s", id, id.Serialize())
	}
	for _, other := range []*tensor.FixedShapeType{
		mk(arrow.PrimitiveTypes.Float64, []int64{2, 3}, nil, nil),
		mk(f32, []int64{3, 2}, nil, nil),
		mk(f32, []int64{2, 3}, []int64{1, 0}, nil),
		mk(f32, []int64{2, 3}, nil, []string{"a", "b"}),
		mk(f32, []int64{6}, nil, nil),
	} {
		if arrow.TypeEqual(base, other) || arrow.TypeEqual(other, base) {
			t.Errorf("%s equals %s", base, other)
		}
	}
	// Another implementation of the canonical type, with an explicit
	// identity permutation, is the same type; other extensions are not.
	foreign := &otherTensor{ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(6, f32)},
		md: `{"shape":[2,3],"permutation":[0,1]}`}
	if !base.ExtensionEquals(foreign) {
		t.Error("another implementation of the same type differs")
	}
	got, err := tensor.FromExtension(foreign)
	must(t, err)
	if !arrow.TypeEqual(got, base) {
		t.Errorf("FromExtension: %s", got)
	}
	if same, err := tensor.FromExtension(base); err != nil || same != base {
		t.Errorf("FromExtension of our own: %v %v", same, err)
	}
	foreign.name = "other.tensor"
	if base.ExtensionEquals(foreign) {
		t.Error("another extension type is equal")
	}
	if _, err := tensor.FromExtension(foreign); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("FromExtension of another extension: %v", err)
	}
}

// otherTensor stands for another implementation of the canonical type.
type otherTensor struct {
	arrow.ExtensionBase
	name, md string
}

func (o *otherTensor) ExtensionName() string {
	if o.name != "" {
		return o.name
	}
	return tensor.ExtensionName
}
func (o *otherTensor) Serialize() string { return o.md }
func (o *otherTensor) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return nil, errors.New("not used")
}
func (o *otherTensor) ExtensionEquals(x arrow.ExtensionType) bool { return arrow.ExtensionType(o) == x }
func (o *otherTensor) ArrayType() reflect.Type                    { return reflect.TypeOf(otherArray{}) }

// The type is registered with arrow-go: it comes back through the C Data
// Interface, and arrays of it are FixedShapeArrays.
func TestRegistered(t *testing.T) {
	reg := arrow.GetExtensionType(tensor.ExtensionName)
	if _, ok := reg.(*tensor.FixedShapeType); !ok {
		t.Fatalf("registered: %T", reg)
	}
	// A second registration is refused by arrow-go; ours stays.
	again, err := tensor.NewFixedShapeType(f32, []int64{1}, nil, nil)
	must(t, err)
	if arrow.RegisterExtensionType(again) == nil {
		t.Error("a second registration was accepted")
	}
	tt, err := tensor.NewFixedShapeType(arrow.PrimitiveTypes.Int16, []int64{2, 2}, []int64{1, 0}, []string{"r", "c"})
	must(t, err)
	leaks := cdevice.LiveLeaks()
	s := cdevice.New[abi.Schema]()
	must(t, cdevice.ExportField(arrow.Field{Name: "x", Type: tt, Nullable: true}, s))
	f, err := cdevice.ImportField(s) // releases s
	cdevice.Free(s)
	must(t, err)
	if !arrow.TypeEqual(f.Type, tt) {
		t.Errorf("through the C Data Interface: %s, want %s", f.Type, tt)
	}
	if l := cdevice.LiveLeaks(); l != leaks {
		t.Errorf("left behind: %s (before: %s)", l, leaks)
	}

	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 4, arrow.PrimitiveTypes.Int16)
	defer b.Release()
	b.Append(true)
	b.ValueBuilder().(*array.Int16Builder).AppendValues([]int16{1, 2, 3, 4}, nil)
	st := b.NewArray()
	defer st.Release()
	a := array.NewExtensionArrayWithStorage(tt, st)
	defer a.Release()
	if _, ok := a.(*tensor.FixedShapeArray); !ok || a.Len() != 1 {
		t.Errorf("array %T", a)
	}
}

func TestInvalid(t *testing.T) {
	for _, bad := range []struct {
		shape, perm []int64
		names       []string
	}{
		{[]int64{2, -1}, nil, nil},
		{[]int64{1 << 20, 1 << 20}, nil, nil},
		{[]int64{2, 3}, []int64{0}, nil},
		{[]int64{2, 3}, []int64{0, 0}, nil},
		{[]int64{2, 3}, []int64{0, 2}, nil},
		{[]int64{2, 3}, []int64{-1, 0}, nil},
		{[]int64{2, 3}, nil, []string{"a"}},
	} {
		if _, err := tensor.NewFixedShapeType(f32, bad.shape, bad.perm, bad.names); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("%v %v %v: %v", bad.shape, bad.perm, bad.names, err)
		}
	}
	if _, err := tensor.NewFixedShapeType(nil, []int64{2}, nil, nil); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("nil value type: %v", err)
	}
	// arrow-go has no fixed_size_list of size 0.
	for _, shape := range [][]int64{{2, 0}, {0}} {
		if _, err := tensor.NewFixedShapeType(f32, shape, nil, nil); !errors.Is(err, cdevice.ErrUnsupported) {
			t.Errorf("shape %v: %v", shape, err)
		}
	}
	reg := arrow.GetExtensionType(tensor.ExtensionName)
	for _, md := range []string{``, `{}`, `not json`, `{"shape":3}`, `{"shape":[4],"permutation":[1]}`,
		`{"shape":[4],"dim_names":["a","b"]}`, `{"shape":[3]}`, `{"shape":[2,-2]}`} {
		if _, err := reg.Deserialize(arrow.FixedSizeListOf(4, f32), md); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("Deserialize(%q): %v", md, err)
		}
	}
	for _, st := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.ListOf(f32), arrow.FixedSizeListOf(5, f32)} {
		if _, err := reg.Deserialize(st, `{"shape":[2,2]}`); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("storage %s: %v", st, err)
		}
	}
}

type otherArray struct{ array.ExtensionArrayBase }
