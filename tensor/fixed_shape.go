package tensor

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
)

// ExtensionName is the name of Arrow's canonical fixed shape tensor type.
const ExtensionName = "arrow.fixed_shape_tensor"

// MaxListSize is the most values a row may hold: the list size of the
// storage's fixed_size_list is an int32.
const MaxListSize = 1<<31 - 1

// A FixedShapeType is the arrow.fixed_shape_tensor extension type: tensors
// of ValueType elements and physical Shape, with an optional Permutation
// (nil for the identity) and optional DimNames.
type FixedShapeType struct {
	arrow.ExtensionBase
	value    arrow.DataType
	shape    []int64
	perm     []int64 // nil: identity
	dimNames []string
}

// A FixedShapeArray is an array of a FixedShapeType. Its values print,
// marshal and parse (array.FromJSON, a builder's AppendValueFromString) as
// its storage's do: one tensor is the JSON array of its elements in
// storage (physical, row-major) order.
type FixedShapeArray struct {
	array.ExtensionArrayBase
}

// ValueStr is tensor i as its storage shows it: a JSON array of its
// elements, or array.NullValueStr.
func (a *FixedShapeArray) ValueStr(i int) string { return a.Storage().ValueStr(i) }

func init() {
	if arrow.GetExtensionType(ExtensionName) == nil {
		t, _ := NewFixedShapeType(arrow.PrimitiveTypes.Int8, []int64{1}, nil, nil)
		_ = arrow.RegisterExtensionType(t) // an implementation registered meanwhile stands
	}
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: tensor: %s", cdevice.ErrInvalid, fmt.Sprintf(format, args...))
}

// NewFixedShapeType returns the type of tensors of value elements and
// physical shape. permutation and dimNames may be nil; an identity
// permutation is the same as none. A shape of no elements is refused with
// an error wrapping cdevice.ErrUnsupported (arrow-go has no fixed_size_list
// of size 0), other bad parameters with cdevice.ErrInvalid.
func NewFixedShapeType(value arrow.DataType, shape, permutation []int64, dimNames []string) (*FixedShapeType, error) {
	if value == nil {
		return nil, invalidf("nil value type")
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 || d > 0 && n > MaxListSize/d {
			return nil, invalidf("shape %v (a fixed_size_list holds at most 2^31-1 values)", shape)
		}
		n *= d
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: tensor: shape %v has no elements (arrow-go has no fixed_size_list of size 0)", cdevice.ErrUnsupported, shape)
	}
	if permutation != nil {
		if len(permutation) != len(shape) {
			return nil, invalidf("permutation %v for %d dimensions", permutation, len(shape))
		}
		seen := make([]bool, len(shape))
		identity := true
		for i, p := range permutation {
			if p < 0 || p >= int64(len(shape)) || seen[p] {
				return nil, invalidf("%v is not a permutation of [0, %d)", permutation, len(shape))
			}
			seen[p] = true
			identity = identity && p == int64(i)
		}
		if identity {
			permutation = nil
		}
	}
	if dimNames != nil && len(dimNames) != len(shape) {
		return nil, invalidf("%d dim_names for %d dimensions", len(dimNames), len(shape))
	}
	return &FixedShapeType{
		ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(int32(n), value)},
		value:         value, shape: slices.Clone(shape), perm: slices.Clone(permutation), dimNames: slices.Clone(dimNames),
	}, nil
}

// ValueType is the type of the tensors' elements.
func (t *FixedShapeType) ValueType() arrow.DataType { return t.value }

// Shape is the physical shape of each tensor (row-major storage order).
func (t *FixedShapeType) Shape() []int64 { return slices.Clone(t.shape) }

// Permutation maps logical to physical dimensions (logical dimension i is
// physical dimension Permutation()[i]); nil for the identity.
func (t *FixedShapeType) Permutation() []int64 { return slices.Clone(t.perm) }

// DimNames are the names of the physical dimensions, or nil.
func (t *FixedShapeType) DimNames() []string { return slices.Clone(t.dimNames) }

// LogicalShape is the shape of the logical view: shape[perm[i]].
func (t *FixedShapeType) LogicalShape() []int64 {
	out := t.Shape()
	for i, p := range t.perm {
		out[i] = t.shape[p]
	}
	return out
}

// ExtensionName is "arrow.fixed_shape_tensor".
func (*FixedShapeType) ExtensionName() string { return ExtensionName }

// ArrayType is the array type arrow-go makes for this type.
func (*FixedShapeType) ArrayType() reflect.Type { return reflect.TypeOf(FixedShapeArray{}) }

func (t *FixedShapeType) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "extension<%s[value_type=%s, shape=%v", ExtensionName, t.value, t.shape)
	if t.perm != nil {
		fmt.Fprintf(&b, ", permutation=%v", t.perm)
	}
	if t.dimNames != nil {
		fmt.Fprintf(&b, ", dim_names=[%s]", strings.Join(t.dimNames, ","))
	}
	b.WriteString("]>")
	return b.String()
}

// metadata is the serialized form the specification defines.
type metadata struct {
	Shape       []int64  `json:"shape"`
	DimNames    []string `json:"dim_names,omitempty"`
	Permutation []int64  `json:"permutation,omitempty"`
}

// Serialize is the JSON object the specification defines, e.g.
// {"shape":[2,3],"permutation":[1,0]}.
func (t *FixedShapeType) Serialize() string {
	shape := t.shape
	if shape == nil {
		shape = []int64{}
	}
	b, _ := json.Marshal(metadata{Shape: shape, DimNames: t.dimNames, Permutation: t.perm})
	return string(b)
}

// Deserialize makes the type from its storage type and serialized form.
// The storage's field name and nullability are kept.
func (*FixedShapeType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	return deserialize(storage, data)
}

func deserialize(storage arrow.DataType, data string) (*FixedShapeType, error) {
	var md metadata
	if err := json.Unmarshal([]byte(data), &md); err != nil || md.Shape == nil {
		return nil, invalidf("%s metadata %q is not {\"shape\": [...], ...}", ExtensionName, data)
	}
	fsl, ok := storage.(*arrow.FixedSizeListType)
	if !ok {
		return nil, invalidf("%s: storage type %s is not a fixed_size_list", ExtensionName, storage)
	}
	t, err := NewFixedShapeType(fsl.Elem(), md.Shape, md.Permutation, md.DimNames)
	if err != nil {
		return nil, err
	}
	if fsl.Len() != t.Storage.(*arrow.FixedSizeListType).Len() {
		return nil, invalidf("%s: storage %s does not hold shape %v", ExtensionName, storage, md.Shape)
	}
	t.Storage = storage
	return t, nil
}

// FromExtension returns ext as a FixedShapeType: ext itself when it is
// one, else the type read from the serialized metadata of another
// implementation of arrow.fixed_shape_tensor. Other extension types, and
// malformed ones, are errors wrapping cdevice.ErrInvalid.
func FromExtension(ext arrow.ExtensionType) (*FixedShapeType, error) {
	if t, ok := ext.(*FixedShapeType); ok {
		return t, nil
	}
	if ext == nil || ext.ExtensionName() != ExtensionName {
		return nil, invalidf("%v is not %s", ext, ExtensionName)
	}
	return deserialize(ext.StorageType(), ext.Serialize())
}

// ExtensionEquals compares with any implementation of the canonical type:
// value type, shape, permutation and dim_names.
func (t *FixedShapeType) ExtensionEquals(other arrow.ExtensionType) bool {
	o, err := FromExtension(other)
	return err == nil && arrow.TypeEqual(t.value, o.value) && slices.Equal(t.shape, o.shape) &&
		slices.Equal(t.perm, o.perm) && slices.Equal(t.dimNames, o.dimNames)
}
