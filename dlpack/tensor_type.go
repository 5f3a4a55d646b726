package dlpack

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// FixedShapeTensorName is the extension name of Arrow's canonical fixed
// shape tensor type.
const FixedShapeTensorName = "arrow.fixed_shape_tensor"

// FixedShapeTensorType is Arrow's canonical extension type
// arrow.fixed_shape_tensor: each element of the array is a tensor of one
// fixed shape, stored as a FixedSizeList<value_type, product(shape)> in
// row-major order of the physical shape. arrow-go (v18) has no
// implementation of it, so this package carries one; it is registered with
// arrow-go at init unless another implementation was registered first.
// Export accepts any registered implementation (it reads the type's
// serialized metadata).
//
// Permutation (optional) maps logical to physical dimensions: logical
// dimension i is physical dimension Permutation()[i], so the logical shape
// is shape[perm[0]], shape[perm[1]], ... DimNames (optional) name the
// physical dimensions.
type FixedShapeTensorType struct {
	arrow.ExtensionBase
	value    arrow.DataType
	shape    []int64
	perm     []int64 // nil: identity
	dimNames []string
}

// FixedShapeTensorArray is the array type of FixedShapeTensorType.
type FixedShapeTensorArray struct {
	array.ExtensionArrayBase
}

func init() {
	// A registration that fails means another implementation (a future
	// arrow-go's, say) was registered first; ours stays usable directly.
	_ = arrow.RegisterExtensionType(&FixedShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(1, arrow.PrimitiveTypes.Int8)},
		value:         arrow.PrimitiveTypes.Int8, shape: []int64{1},
	})
}

// NewFixedShapeTensorType returns the fixed shape tensor type of tensors of
// value type value and physical shape shape. permutation and dimNames may
// be nil; an identity permutation is the same as none.
func NewFixedShapeTensorType(value arrow.DataType, shape, permutation []int64, dimNames []string) (*FixedShapeTensorType, error) {
	if value == nil {
		return nil, invalidf("fixed shape tensor: nil value type")
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, invalidf("fixed shape tensor: negative dimension in shape %v", shape)
		}
		var ok bool
		if n, ok = mulNonNeg(n, d); !ok || n > 1<<31-1 {
			return nil, invalidf("fixed shape tensor: shape %v has more than 2^31-1 elements", shape)
		}
	}
	if permutation != nil {
		if len(permutation) != len(shape) {
			return nil, invalidf("fixed shape tensor: permutation %v for %d dimensions", permutation, len(shape))
		}
		seen := make([]bool, len(shape))
		identity := true
		for i, p := range permutation {
			if p < 0 || p >= int64(len(shape)) || seen[p] {
				return nil, invalidf("fixed shape tensor: %v is not a permutation of 0..%d", permutation, len(shape)-1)
			}
			seen[p] = true
			identity = identity && p == int64(i)
		}
		if identity {
			permutation = nil
		}
	}
	if dimNames != nil && len(dimNames) != len(shape) {
		return nil, invalidf("fixed shape tensor: %d dim_names for %d dimensions", len(dimNames), len(shape))
	}
	return &FixedShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(int32(n), value)},
		value:         value, shape: slices.Clone(shape), perm: slices.Clone(permutation), dimNames: slices.Clone(dimNames),
	}, nil
}

// ValueType is the type of the tensors' elements.
func (t *FixedShapeTensorType) ValueType() arrow.DataType { return t.value }

// Shape is the physical shape of each tensor (row-major storage order).
func (t *FixedShapeTensorType) Shape() []int64 { return slices.Clone(t.shape) }

// Permutation is the logical-to-physical dimension mapping, nil for the
// identity.
func (t *FixedShapeTensorType) Permutation() []int64 { return slices.Clone(t.perm) }

// DimNames are the names of the physical dimensions, or nil.
func (t *FixedShapeTensorType) DimNames() []string { return slices.Clone(t.dimNames) }

// LogicalShape is the shape of the logical view: shape[perm[i]].
func (t *FixedShapeTensorType) LogicalShape() []int64 {
	if t.perm == nil {
		return t.Shape()
	}
	out := make([]int64, len(t.shape))
	for i, p := range t.perm {
		out[i] = t.shape[p]
	}
	return out
}

// ExtensionName is "arrow.fixed_shape_tensor".
func (*FixedShapeTensorType) ExtensionName() string { return FixedShapeTensorName }

// ArrayType is the array type arrow-go makes for this type.
func (*FixedShapeTensorType) ArrayType() reflect.Type {
	return reflect.TypeOf(FixedShapeTensorArray{})
}

func (t *FixedShapeTensorType) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "extension<%s[value_type=%s, shape=%v", FixedShapeTensorName, t.value, t.shape)
	if t.perm != nil {
		fmt.Fprintf(&b, ", permutation=%v", t.perm)
	}
	if t.dimNames != nil {
		fmt.Fprintf(&b, ", dim_names=%v", t.dimNames)
	}
	b.WriteString("]>")
	return b.String()
}

// tensorMetadata is the serialized form the canonical type defines.
type tensorMetadata struct {
	Shape       []int64  `json:"shape"`
	DimNames    []string `json:"dim_names,omitempty"`
	Permutation []int64  `json:"permutation,omitempty"`
}

// Serialize is the JSON object the specification defines, e.g.
// {"shape":[2,3],"permutation":[1,0]}.
func (t *FixedShapeTensorType) Serialize() string {
	shape := t.shape
	if shape == nil {
		shape = []int64{}
	}
	b, _ := json.Marshal(tensorMetadata{Shape: shape, DimNames: t.dimNames, Permutation: t.perm})
	return string(b)
}

// parseTensorMetadata reads the serialized parameters of any
// implementation of the canonical type.
func parseTensorMetadata(s string) (tensorMetadata, error) {
	var md tensorMetadata
	if err := json.Unmarshal([]byte(s), &md); err != nil {
		return md, invalidf("%s metadata %q: %v", FixedShapeTensorName, s, err)
	}
	if md.Shape == nil {
		return md, invalidf("%s metadata %q has no shape", FixedShapeTensorName, s)
	}
	return md, nil
}

// Deserialize makes the type from its storage type and serialized form.
func (*FixedShapeTensorType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	fsl, ok := storage.(*arrow.FixedSizeListType)
	if !ok {
		return nil, invalidf("%s: storage type %s is not a fixed_size_list", FixedShapeTensorName, storage)
	}
	md, err := parseTensorMetadata(data)
	if err != nil {
		return nil, err
	}
	t, err := NewFixedShapeTensorType(fsl.Elem(), md.Shape, md.Permutation, md.DimNames)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(t.Storage, storage) {
		if int64(fsl.Len()) != int64(t.Storage.(*arrow.FixedSizeListType).Len()) {
			return nil, invalidf("%s: storage %s does not hold shape %v", FixedShapeTensorName, storage, md.Shape)
		}
		t.Storage = storage // keep the storage's field name and nullability
	}
	return t, nil
}

// ExtensionEquals compares value type, shape, permutation and dim_names.
func (t *FixedShapeTensorType) ExtensionEquals(other arrow.ExtensionType) bool {
	o, ok := other.(*FixedShapeTensorType)
	return ok && arrow.TypeEqual(t.value, o.value) && slices.Equal(t.shape, o.shape) &&
		slices.Equal(t.perm, o.perm) && slices.Equal(t.dimNames, o.dimNames)
}

func mulNonNeg(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > (1<<63-1)/b {
		return 0, false
	}
	return a * b, true
}
