package ndarray_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ndarray"
	"github.com/purearrow/cdevice/tensor"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStrides(t *testing.T) {
	if got := ndarray.RowMajor([]int64{2, 3, 4}, 8); !slices.Equal(got, []int64{96, 32, 8}) {
		t.Errorf("RowMajor %v", got)
	}
	if got := ndarray.RowMajor([]int64{2, 0, 4}, 1); !slices.Equal(got, []int64{4, 4, 1}) {
		t.Errorf("RowMajor with an empty dimension %v", got)
	}
	// Rows of physical [2, 3, 4] seen with logical dimension i = phys[perm[i]], perm [2, 0, 1].
	if got := ndarray.LogicalStrides([]int64{2, 3, 4}, []int{2, 0, 1}, 4); !slices.Equal(got, []int64{96, 4, 48, 16}) {
		t.Errorf("LogicalStrides %v", got)
	}
	if !ndarray.Matches([]int64{2, 1, 3}, []int64{24, 5, 8}, []int64{24, 24, 8}) ||
		ndarray.Matches([]int64{2, 3}, []int64{8, 16}, []int64{24, 8}) ||
		!ndarray.Matches([]int64{0, 3}, []int64{1, 1}, []int64{24, 8}) {
		t.Error("Matches")
	}
	if lo, hi, ok := ndarray.Span([]int64{3, 2}, []int64{-8, 2}); !ok || lo != -16 || hi != 2 {
		t.Errorf("Span %d %d %v", lo, hi, ok)
	}
	if _, _, ok := ndarray.Span([]int64{3, 3}, []int64{1 << 62, 1 << 62}); ok {
		t.Error("Span overflow not seen")
	}
	if _, _, ok := ndarray.Span([]int64{3, 3}, []int64{-1 << 62, -1 << 62}); ok {
		t.Error("negative Span overflow not seen")
	}
	if n, ok := ndarray.Product([]int64{2, 3, 4}); !ok || n != 24 {
		t.Errorf("Product %d", n)
	}
	for _, bad := range [][]int64{{2, -1}, {1 << 32, 1 << 32}} {
		if _, ok := ndarray.Product(bad); ok {
			t.Errorf("Product(%v) ok", bad)
		}
	}
	if bits, zeros := ndarray.PackBits([]byte{1, 0, 2, 0, 0, 0, 0, 0, 9}); !slices.Equal(bits, []byte{5, 1}) || zeros != 6 {
		t.Errorf("PackBits %v %d", bits, zeros)
	}
}

// Copy over every visiting order and a reversed source.
func TestCopy(t *testing.T) {
	src := make([]byte, 48)
	for i := range src {
		src[i] = byte(i)
	}
	shape, from := []int64{2, 3, 4}, []int64{24, 8, 2} // 2-byte items, row-major
	// Into row-major order: the same bytes.
	got := make([]byte, 48)
	ndarray.Copy(got, src, shape, ndarray.RowMajor(shape, 2), from, 0, 2)
	if !slices.Equal(got, src) {
		t.Errorf("identity copy %v", got)
	}
	// Into the physical layout of permutation [2, 0, 1]: (4, 2, 3) row-major.
	to := ndarray.LogicalStrides([]int64{4, 2, 3}, []int{1, 2, 0}, 2)[1:]
	ndarray.Copy(got, src, shape, to, from, 0, 2)
	var want []byte
	for k := range 4 {
		for i := range 2 {
			for j := range 3 {
				o := i*24 + j*8 + k*2
				want = append(want, byte(o), byte(o+1))
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("permuted copy\n got %v\nwant %v", got, want)
	}
	// A reversed source: the first element is the last in memory.
	rev := make([]byte, 8)
	ndarray.Copy(rev, src, []int64{4}, []int64{2}, []int64{-2}, 6, 2)
	if !slices.Equal(rev, []byte{6, 7, 4, 5, 2, 3, 0, 1}) {
		t.Errorf("reversed %v", rev)
	}
	// 0-d and empty arrays.
	one := make([]byte, 2)
	ndarray.Copy(one, src, nil, nil, nil, 4, 2)
	if !slices.Equal(one, []byte{4, 5}) {
		t.Errorf("0-d %v", one)
	}
	ndarray.Copy(nil, nil, []int64{0, 3}, []int64{6, 2}, []int64{6, 2}, 0, 2)
}

func TestLayout(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	tt, err := tensor.NewFixedShapeType(f64, []int64{2, 3, 4}, []int64{2, 0, 1}, nil)
	must(t, err)
	for _, c := range []struct {
		dt             arrow.DataType
		phys, rowShape []int64
		strides        []int64
		levels         int
		permuted       bool
	}{
		{f64, nil, []int64{}, []int64{1}, 0, false},
		{arrow.FixedSizeListOf(3, f64), []int64{3}, []int64{3}, []int64{3, 1}, 1, false},
		{arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(3, f64)), []int64{2, 3}, []int64{2, 3}, []int64{6, 3, 1}, 2, false},
		{tt, []int64{2, 3, 4}, []int64{4, 2, 3}, []int64{24, 1, 12, 4}, 1, true},
		// A list of tensors, and a tensor of lists.
		{arrow.FixedSizeListOf(5, tt), []int64{5, 2, 3, 4}, []int64{5, 4, 2, 3}, []int64{120, 24, 1, 12, 4}, 2, true},
	} {
		l, err := ndarray.LayoutOf(c.dt)
		must(t, err)
		if !slices.Equal(l.Phys, c.phys) || !slices.Equal(l.RowShape(), c.rowShape) || !slices.Equal(l.Strides(1), c.strides) ||
			len(l.Levels) != c.levels || l.Permuted() != c.permuted || !arrow.TypeEqual(l.Elem, f64) {
			t.Errorf("%s: phys %v shape %v strides %v levels %d permuted %v elem %s", c.dt, l.Phys, l.RowShape(), l.Strides(1),
				len(l.Levels), l.Permuted(), l.Elem)
		}
		if n, ok := l.Elements(3); !ok || n != 3*c.strides[0] || l.Per(0) != c.strides[0] || l.Per(len(l.Levels)) != 1 {
			t.Errorf("%s: elements %d, per %d", c.dt, n, l.Per(0))
		}
		if got := l.Shape(7); got[0] != 7 || !slices.Equal(got[1:], c.rowShape) {
			t.Errorf("%s: shape %v", c.dt, got)
		}
	}
	// Too deep, too big, malformed.
	deep := arrow.DataType(f64)
	for range ndarray.MaxDims {
		deep = arrow.FixedSizeListOf(1, deep)
	}
	big := arrow.FixedSizeListOf(1<<30, arrow.FixedSizeListOf(1<<30, arrow.FixedSizeListOf(1<<30, f64)))
	for _, dt := range []arrow.DataType{deep, big} {
		if _, err := ndarray.LayoutOf(dt); !errors.Is(err, cdevice.ErrUnsupported) {
			t.Errorf("%.60s: %v", dt, err)
		}
	}
	bad := &fakeTensor{ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(5, f64)}}
	if _, err := ndarray.LayoutOf(bad); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("malformed tensor: %v", err)
	}
	if _, err := ndarray.LayoutOf(nil); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("nil: %v", err)
	}
}

// fakeTensor claims the canonical name with metadata that does not fit its
// storage.
type fakeTensor struct{ arrow.ExtensionBase }

func (*fakeTensor) ExtensionName() string { return tensor.ExtensionName }
func (*fakeTensor) Serialize() string     { return `{"shape":[2,2]}` }
func (*fakeTensor) ArrayType() reflect.Type {
	return reflect.TypeOf(fakeArray{})
}
func (f *fakeTensor) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) { return f, nil }
func (f *fakeTensor) ExtensionEquals(o arrow.ExtensionType) bool                      { return o == arrow.ExtensionType(f) }

type fakeArray struct{ array.ExtensionArrayBase }

// Place and Tree: a tree made by Tree is placed back, offsets compose.
func TestPlaceTree(t *testing.T) {
	tt, err := tensor.NewFixedShapeType(arrow.PrimitiveTypes.Int32, []int64{2, 3}, nil, nil)
	must(t, err)
	l, err := ndarray.LayoutOf(arrow.FixedSizeListOf(4, tt))
	must(t, err)
	leaf := cdevice.DeviceArray{Offset: 5, Buffers: []cdevice.DeviceBuffer{{}, {Ptr: 0x1000, Size: 1 << 12}},
		DeviceType: abi.DeviceCPU, DeviceID: -1, Device: device.CPU}
	root := l.Tree(3, leaf)
	if root.Length != 3 || root.Type != l.Type || len(root.Children) != 1 || root.Device != device.CPU {
		t.Fatalf("root %+v", root)
	}
	mid := root.Children[0]
	if mid.Length != 12 || mid.Type != arrow.DataType(tt) || mid.Children[0].Length != 72 || mid.Children[0].Type != l.Elem {
		t.Fatalf("mid %+v, leaf %+v", mid, mid.Children[0])
	}
	root.Offset, mid.Offset = 1, 2
	nodes, err := l.Place(root)
	must(t, err)
	if len(nodes) != 3 || nodes[0].Start != 1 || nodes[1].Start != 1*4+2 || nodes[2].Start != 6*6+5 {
		t.Errorf("starts %d %d %d", nodes[0].Start, nodes[1].Start, nodes[2].Start)
	}
	mid.Children = nil
	if _, err := l.Place(root); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("no child: %v", err)
	}
	root.Offset = -1
	if _, err := l.Place(root); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("negative offset: %v", err)
	}
	root.Offset, mid.Children, mid.Offset = 1<<62, []*cdevice.DeviceArray{{}}, 0
	if _, err := l.Place(root); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("overflow: %v", err)
	}
}

func TestBool8(t *testing.T) {
	b := ndarray.Bool8()
	if !ndarray.IsBool8(b) || b.ExtensionName() != "arrow.bool8" || !arrow.TypeEqual(b.StorageType(), arrow.PrimitiveTypes.Int8) {
		t.Fatalf("Bool8: %s", b)
	}
	if back, err := b.Deserialize(arrow.PrimitiveTypes.Int8, ""); err != nil || !arrow.TypeEqual(back, b) {
		t.Errorf("Deserialize: %v %v", back, err)
	}
	if _, err := b.Deserialize(arrow.PrimitiveTypes.Uint8, ""); err == nil {
		t.Error("uint8 storage accepted")
	}
	if ndarray.IsBool8(arrow.PrimitiveTypes.Int8) {
		t.Error("int8 is not bool8")
	}
	// Another implementation registered (as arrow-go's arrow/extensions
	// does) is the one used, and the same type.
	other := &otherBool8{arrow.ExtensionBase{Storage: arrow.PrimitiveTypes.Int8}}
	must(t, arrow.RegisterExtensionType(other))
	defer arrow.UnregisterExtensionType("arrow.bool8")
	if got := ndarray.Bool8(); got != arrow.ExtensionType(other) || !arrow.TypeEqual(b, other) {
		t.Errorf("Bool8 with one registered: %s", got)
	}
}

type otherBool8 struct{ arrow.ExtensionBase }

func (*otherBool8) ExtensionName() string   { return "arrow.bool8" }
func (*otherBool8) Serialize() string       { return "" }
func (*otherBool8) ArrayType() reflect.Type { return reflect.TypeOf(fakeArray{}) }
func (o *otherBool8) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return o, nil
}
func (o *otherBool8) ExtensionEquals(x arrow.ExtensionType) bool {
	return x.ExtensionName() == "arrow.bool8"
}

func TestOrder(t *testing.T) {
	if got := ndarray.Order([]int64{4, 48, 12, 12}); !slices.Equal(got, []int{1, 2, 3, 0}) {
		t.Errorf("Order %v", got)
	}
}
