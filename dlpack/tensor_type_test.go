package dlpack_test

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
)

func TestFixedShapeTensorType(t *testing.T) {
	f32 := arrow.PrimitiveTypes.Float32
	tt, err := dlpack.NewFixedShapeTensorType(f32, []int64{100, 200, 500}, []int64{2, 0, 1}, []string{"C", "H", "W"})
	must(t, err)
	if got := tt.Serialize(); got != `{"shape":[100,200,500],"dim_names":["C","H","W"],"permutation":[2,0,1]}` {
		t.Errorf("Serialize = %s", got)
	}
	if got := tt.LogicalShape(); !slices.Equal(got, []int64{500, 100, 200}) { // the specification's example
		t.Errorf("logical shape %v", got)
	}
	if st := tt.StorageType().(*arrow.FixedSizeListType); st.Len() != 100*200*500 || !arrow.TypeEqual(st.Elem(), f32) {
		t.Errorf("storage %s", st)
	}

	// Registered with arrow-go: the C Data Interface brings it back.
	reg := arrow.GetExtensionType(dlpack.FixedShapeTensorName)
	if reg == nil {
		t.Fatal("arrow.fixed_shape_tensor is not registered")
	}
	back, err := reg.Deserialize(tt.StorageType(), tt.Serialize())
	must(t, err)
	if !arrow.TypeEqual(back, tt) {
		t.Errorf("Deserialize: %s, want %s", back, tt)
	}
	s := cdevice.New[abi.Schema]()
	defer cdevice.Free(s)
	must(t, cdevice.ExportField(arrow.Field{Name: "x", Type: tt, Nullable: true}, s))
	f, err := cdevice.ImportField(s)
	must(t, err)
	if !arrow.TypeEqual(f.Type, tt) {
		t.Errorf("through the C Data Interface: %s, want %s", f.Type, tt)
	}

	// An identity permutation is none; no shape is a 0-d tensor per row.
	id, err := dlpack.NewFixedShapeTensorType(f32, []int64{2, 3}, []int64{0, 1}, nil)
	must(t, err)
	plain, err := dlpack.NewFixedShapeTensorType(f32, []int64{2, 3}, nil, nil)
	must(t, err)
	if !arrow.TypeEqual(id, plain) || id.Permutation() != nil || id.Serialize() != `{"shape":[2,3]}` {
		t.Errorf("identity permutation: %s %s", id, id.Serialize())
	}
	if arrow.TypeEqual(plain, tt) {
		t.Error("different tensor types are equal")
	}

	for _, bad := range []struct {
		shape, perm []int64
		names       []string
	}{
		{[]int64{2, -1}, nil, nil},
		{[]int64{2, 3}, []int64{0}, nil},
		{[]int64{2, 3}, []int64{0, 0}, nil},
		{[]int64{2, 3}, []int64{0, 2}, nil},
		{[]int64{2, 3}, nil, []string{"a"}},
		{[]int64{1 << 20, 1 << 20}, nil, nil},
	} {
		_, err := dlpack.NewFixedShapeTensorType(f32, bad.shape, bad.perm, bad.names)
		wantIs(t, err, cdevice.ErrInvalid)
	}
	for _, md := range []string{`{}`, `not json`, `{"shape":[4],"permutation":[1]}`} {
		_, err := reg.Deserialize(arrow.FixedSizeListOf(4, f32), md)
		wantIs(t, err, cdevice.ErrInvalid)
	}
	_, err = reg.Deserialize(arrow.PrimitiveTypes.Int32, `{"shape":[1]}`)
	wantIs(t, err, cdevice.ErrInvalid)
	_, err = reg.Deserialize(arrow.FixedSizeListOf(5, f32), `{"shape":[2,2]}`)
	wantIs(t, err, cdevice.ErrInvalid)
}

func TestTypeNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{dlpack.DeviceCUDAManaged.String(), "cuda_managed"},
		{dlpack.DeviceTrn.String(), "trn"},
		{dlpack.DeviceType(5).String(), "device(5)"},
		{dlpack.DataType{Code: dlpack.CodeFloat, Bits: 16, Lanes: 1}.String(), "float16"},
		{dlpack.DataType{Code: dlpack.CodeInt, Bits: 32, Lanes: 4}.String(), "int32x4"},
		{dlpack.DataTypeCode(99).String(), "code(99)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	for dt := dlpack.DeviceType(0); dt < 20; dt++ {
		a, ok := dt.Arrow()
		if ok != (dt >= 1 && dt <= 16 && dt != 5 && dt != 6) || ok && int32(a) != int32(dt) {
			t.Errorf("%v.Arrow() = %v, %v", dt, a, ok)
		}
	}
}
