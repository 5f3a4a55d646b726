package cai

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TensorExtensionName is the name of Arrow's canonical fixed shape tensor
// extension type.
const TensorExtensionName = "arrow.fixed_shape_tensor"

// A FixedShapeTensorType is Arrow's canonical arrow.fixed_shape_tensor
// extension type (arrow-go v18 has none): every element is a tensor of the
// same shape, stored as a fixed_size_list<value, product of shape> in
// row-major order of the physical Shape. Permutation, when given, says
// that dimension i of the logical tensor is dimension Permutation[i] of
// the physical one; DimNames name the physical dimensions.
//
// The type is registered with arrow-go under its canonical name when this
// package is initialized, unless another one already is; Export reads any
// extension type of that name by its serialized metadata.
type FixedShapeTensorType struct {
	arrow.ExtensionBase
	value       arrow.DataType
	shape       []int64
	permutation []int64
	dimNames    []string
}

// NewFixedShapeTensorType returns the tensor type of value elements and
// physical shape, with an optional permutation of [0, len(shape)) and
// optional names of the dimensions (nil for none). Errors wrap ErrInvalid,
// or ErrUnsupported for a shape of no elements (which arrow-go's
// fixed_size_list cannot hold).
func NewFixedShapeTensorType(value arrow.DataType, shape, permutation []int64, dimNames []string) (*FixedShapeTensorType, error) {
	if value == nil {
		return nil, invalidf("fixed shape tensor: nil value type")
	}
	n := int64(1)
	for _, s := range shape {
		if s < 0 || s > 0 && n > (1<<31-1)/s {
			return nil, invalidf("fixed shape tensor: shape %v (a fixed_size_list holds at most 2^31-1 values)", shape)
		}
		n *= s
	}
	if n == 0 {
		return nil, unsupportedf("fixed shape tensor: shape %v has no elements (arrow-go has no fixed_size_list of size 0)", shape)
	}
	if permutation != nil {
		if len(permutation) != len(shape) {
			return nil, invalidf("fixed shape tensor: permutation %v for %d dimensions", permutation, len(shape))
		}
		seen := make([]bool, len(shape))
		for _, p := range permutation {
			if p < 0 || p >= int64(len(shape)) || seen[p] {
				return nil, invalidf("fixed shape tensor: %v is not a permutation of [0, %d)", permutation, len(shape))
			}
			seen[p] = true
		}
	}
	if dimNames != nil && len(dimNames) != len(shape) {
		return nil, invalidf("fixed shape tensor: %d dimension names for %d dimensions", len(dimNames), len(shape))
	}
	return &FixedShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(int32(n), value)},
		value:         value, shape: slices.Clone(shape),
		permutation: slices.Clone(permutation), dimNames: slices.Clone(dimNames),
	}, nil
}

// ValueType is the type of the tensors' elements.
func (t *FixedShapeTensorType) ValueType() arrow.DataType { return t.value }

// Shape is the physical (row-major) shape of each tensor.
func (t *FixedShapeTensorType) Shape() []int64 { return slices.Clone(t.shape) }

// Permutation is the permutation from logical to physical dimensions; nil
// when they are the same.
func (t *FixedShapeTensorType) Permutation() []int64 { return slices.Clone(t.permutation) }

// DimNames are the names of the physical dimensions; nil when unnamed.
func (t *FixedShapeTensorType) DimNames() []string { return slices.Clone(t.dimNames) }

// LogicalShape is the shape of the tensors as the permutation shows them.
func (t *FixedShapeTensorType) LogicalShape() []int64 {
	if t.permutation == nil {
		return t.Shape()
	}
	out := make([]int64, len(t.shape))
	for i, p := range t.permutation {
		out[i] = t.shape[p]
	}
	return out
}

func (*FixedShapeTensorType) ExtensionName() string { return TensorExtensionName }

func (t *FixedShapeTensorType) String() string {
	s := fmt.Sprintf("extension<%s[value_type=%s, shape=%v", TensorExtensionName, t.value, t.shape)
	if t.permutation != nil {
		s += fmt.Sprintf(", permutation=%v", t.permutation)
	}
	if t.dimNames != nil {
		s += fmt.Sprintf(", dim_names=[%s]", strings.Join(t.dimNames, ","))
	}
	return s + "]>"
}

func (*FixedShapeTensorType) ArrayType() reflect.Type { return reflect.TypeOf(FixedShapeTensorArray{}) }

type tensorMetadata struct {
	Shape       []int64  `json:"shape"`
	DimNames    []string `json:"dim_names,omitempty"`
	Permutation []int64  `json:"permutation,omitempty"`
}

// Serialize is the canonical JSON metadata, e.g. {"shape":[2,3]}.
func (t *FixedShapeTensorType) Serialize() string {
	b, _ := json.Marshal(tensorMetadata{Shape: t.shape, DimNames: t.dimNames, Permutation: t.permutation})
	return string(b)
}

// Deserialize reads the canonical metadata of a storage type.
func (*FixedShapeTensorType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	md, err := parseTensorMetadata(data)
	if err != nil {
		return nil, err
	}
	fsl, ok := storage.(*arrow.FixedSizeListType)
	if !ok {
		return nil, invalidf("fixed shape tensor: storage %s is not a fixed_size_list", storage)
	}
	t, err := NewFixedShapeTensorType(fsl.Elem(), md.Shape, md.Permutation, md.DimNames)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(t.Storage, storage) {
		return nil, invalidf("fixed shape tensor: storage %s does not hold shape %v", storage, md.Shape)
	}
	t.Storage = storage // keep the storage's own field name and nullability
	return t, nil
}

func parseTensorMetadata(data string) (tensorMetadata, error) {
	var md tensorMetadata
	if err := json.Unmarshal([]byte(data), &md); err != nil || md.Shape == nil {
		return md, invalidf("fixed shape tensor: metadata %q is not {\"shape\": [...], ...}", data)
	}
	return md, nil
}

// ExtensionEquals compares with any implementation of the canonical type:
// value type, shape, permutation and dimension names.
func (t *FixedShapeTensorType) ExtensionEquals(other arrow.ExtensionType) bool {
	if other == nil || other.ExtensionName() != TensorExtensionName {
		return false
	}
	st, ok := other.StorageType().(*arrow.FixedSizeListType)
	if !ok || !arrow.TypeEqual(t.value, st.Elem()) {
		return false
	}
	md, err := parseTensorMetadata(other.Serialize())
	return err == nil && slices.Equal(t.shape, md.Shape) &&
		slices.Equal(t.permutation, md.Permutation) && slices.Equal(t.dimNames, md.DimNames)
}

// A FixedShapeTensorArray is an array of FixedShapeTensorType.
type FixedShapeTensorArray struct {
	array.ExtensionArrayBase
}

func init() {
	if arrow.GetExtensionType(TensorExtensionName) == nil {
		t, _ := NewFixedShapeTensorType(arrow.PrimitiveTypes.Int8, []int64{1}, nil, nil)
		_ = arrow.RegisterExtensionType(t) // another package may have won a race at init: theirs stands
	}
}
