package dlpack

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// maxDims bounds the dimensions of the tensors this package makes or takes.
const maxDims = 64

// A tensorLayout is how arrays of an Arrow type are a tensor: rows along
// the first dimension, each row the same shape, elements of one dtype.
type tensorLayout struct {
	typ   arrow.DataType // the whole type
	elem  arrow.DataType // the leaf type: a fixed-width primitive, Boolean or bool8
	dtype DataType
	bits  bool // elem is Boolean: bit-packed, so a tensor of it is a copy
	// inner is the logical shape after the row dimension and strides its
	// strides (in elements); phys is the physical (row-major) shape.
	inner, strides, phys []int64
	row                  int64 // elements per row: the product of phys
	levels               int   // fixed_size_list levels between root and leaf
	// chain holds the types of the array tree's nodes from the root down to
	// the leaf (levels+1 of them), sizes the list size of each level.
	chain []arrow.DataType
	sizes []int64
}

// layoutOf finds the tensor layout of dt, or says why dt is not a tensor.
func layoutOf(dt arrow.DataType) (*tensorLayout, error) {
	if dt == nil {
		return nil, invalidf("nil type")
	}
	l := &tensorLayout{typ: dt}
	var perm []int64
	cur, tensor := dt, false
	for {
		if l.levels >= maxDims {
			return nil, unsupportedf("type %s: more than %d dimensions", dt, maxDims)
		}
		if ext, ok := cur.(arrow.ExtensionType); ok && ext.ExtensionName() == FixedShapeTensorName {
			if l.levels > 0 {
				return nil, unsupportedf("type %s: a %s inside a fixed_size_list", dt, FixedShapeTensorName)
			}
			md, err := parseTensorMetadata(ext.Serialize())
			if err != nil {
				return nil, err
			}
			fsl, ok := ext.StorageType().(*arrow.FixedSizeListType)
			if !ok {
				return nil, invalidf("type %s: storage is not a fixed_size_list", dt)
			}
			check, err := NewFixedShapeTensorType(fsl.Elem(), md.Shape, md.Permutation, nil)
			if err != nil {
				return nil, err
			}
			if check.Storage.(*arrow.FixedSizeListType).Len() != fsl.Len() {
				return nil, invalidf("type %s: list size %d is not the product of shape %v", dt, fsl.Len(), md.Shape)
			}
			l.phys, perm, tensor = append(l.phys, md.Shape...), check.perm, true
			l.chain, l.sizes = append(l.chain, cur), append(l.sizes, int64(fsl.Len()))
			l.levels++
			cur = fsl.Elem()
			continue
		}
		if fsl, ok := cur.(*arrow.FixedSizeListType); ok {
			if tensor {
				return nil, unsupportedf("type %s: the tensor's value type is a list", dt)
			}
			l.phys = append(l.phys, int64(fsl.Len()))
			l.chain, l.sizes = append(l.chain, cur), append(l.sizes, int64(fsl.Len()))
			l.levels++
			cur = fsl.Elem()
			continue
		}
		break
	}
	if len(l.phys)+1 > maxDims {
		return nil, unsupportedf("type %s: more than %d dimensions", dt, maxDims)
	}
	var ok bool
	if l.dtype, ok = dtypeOf(cur); !ok {
		return nil, unsupportedf("type %s: %s", dt, whyNotTensor(cur))
	}
	l.elem, l.bits = cur, cur.ID() == arrow.BOOL
	l.chain = append(l.chain, cur)
	// Physical row-major strides, then the logical view of them.
	ps := make([]int64, len(l.phys))
	l.row = 1
	for k := len(l.phys) - 1; k >= 0; k-- {
		ps[k] = l.row
		if l.row, ok = mulNonNeg(l.row, l.phys[k]); !ok {
			return nil, unsupportedf("type %s: too many elements per row", dt)
		}
	}
	l.inner, l.strides = l.phys, ps
	if perm != nil {
		l.inner, l.strides = make([]int64, len(perm)), make([]int64, len(perm))
		for i, p := range perm {
			l.inner[i], l.strides[i] = l.phys[p], ps[p]
		}
	}
	return l, nil
}

// shapeFor is the tensor shape of n rows; stridesFor its strides.
func (l *tensorLayout) shapeFor(n int64) []int64 { return append([]int64{n}, l.inner...) }

func (l *tensorLayout) stridesFor() []int64 { return append([]int64{l.row}, l.strides...) }

// dtypeOf is the DLPack dtype of an Arrow leaf type.
func dtypeOf(dt arrow.DataType) (DataType, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return DataType{Code: CodeInt, Bits: uint8(dt.(arrow.FixedWidthDataType).BitWidth()), Lanes: 1}, true
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return DataType{Code: CodeUInt, Bits: uint8(dt.(arrow.FixedWidthDataType).BitWidth()), Lanes: 1}, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return DataType{Code: CodeFloat, Bits: uint8(dt.(arrow.FixedWidthDataType).BitWidth()), Lanes: 1}, true
	case arrow.BOOL:
		return DataType{Code: CodeBool, Bits: 8, Lanes: 1}, true
	case arrow.EXTENSION:
		if dt.(arrow.ExtensionType).ExtensionName() == "arrow.bool8" {
			return DataType{Code: CodeBool, Bits: 8, Lanes: 1}, true
		}
	}
	return DataType{}, false
}

func whyNotTensor(dt arrow.DataType) string {
	switch dt.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.MAP:
		return "variable-length lists are not tensors (fixed_size_list and " + FixedShapeTensorName + " are)"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return "variable-length values have no DLPack dtype"
	case arrow.STRUCT, arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
		return dt.Name() + " arrays are not tensors"
	case arrow.DICTIONARY:
		return "dictionary-encoded arrays are not tensors (decode them first)"
	case arrow.EXTENSION:
		return "extension type " + dt.(arrow.ExtensionType).ExtensionName() + " has no DLPack mapping"
	}
	return dt.String() + " has no DLPack dtype (fixed-width integers, floats and booleans have)"
}

var bool8Type = extensions.NewBool8Type()

// elemOf is the default Arrow leaf type of a DLPack dtype.
func elemOf(d DataType) (arrow.DataType, error) {
	if d.Lanes != 1 {
		return nil, unsupportedf("dtype %s: vector lanes have no Arrow type", d)
	}
	var t arrow.DataType
	switch d.Code {
	case CodeInt:
		t = map[uint8]arrow.DataType{8: arrow.PrimitiveTypes.Int8, 16: arrow.PrimitiveTypes.Int16,
			32: arrow.PrimitiveTypes.Int32, 64: arrow.PrimitiveTypes.Int64}[d.Bits]
	case CodeUInt:
		t = map[uint8]arrow.DataType{8: arrow.PrimitiveTypes.Uint8, 16: arrow.PrimitiveTypes.Uint16,
			32: arrow.PrimitiveTypes.Uint32, 64: arrow.PrimitiveTypes.Uint64}[d.Bits]
	case CodeFloat:
		t = map[uint8]arrow.DataType{16: arrow.FixedWidthTypes.Float16, 32: arrow.PrimitiveTypes.Float32,
			64: arrow.PrimitiveTypes.Float64}[d.Bits]
	case CodeBool:
		if d.Bits == 8 {
			t = bool8Type
		}
	}
	if t == nil {
		return nil, unsupportedf("dtype %s has no Arrow type", d)
	}
	return t, nil
}

// itemSize is the size in bytes of one element of d (lanes 1, whole bytes).
func itemSize(d DataType) int64 { return int64(d.Bits) / 8 }

// defaultType is the Arrow type a tensor of dtype d and shape
// [rows, inner...] imports as: the leaf type for 1-D, else a fixed shape
// tensor of inner.
func defaultType(d DataType, inner []int64) (arrow.DataType, error) {
	elem, err := elemOf(d)
	if err != nil || len(inner) == 0 {
		return elem, err
	}
	return NewFixedShapeTensorType(elem, inner, nil, nil)
}
