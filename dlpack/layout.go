package dlpack

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/internal/ndarray"
	"github.com/purearrow/cdevice/tensor"
)

// A tensorLayout is how arrays of an Arrow type are a tensor (see
// ndarray.Layout), with the DLPack dtype of its elements.
type tensorLayout struct {
	*ndarray.Layout
	dtype DataType
	bits  bool // the leaf is Boolean: bit-packed, so a tensor of it is a copy
}

// layoutOf finds the tensor layout of dt, or says why dt is not a tensor.
func layoutOf(dt arrow.DataType) (*tensorLayout, error) {
	nl, err := ndarray.LayoutOf(dt)
	if err != nil {
		return nil, err
	}
	l := &tensorLayout{Layout: nl, bits: nl.Elem.ID() == arrow.BOOL}
	var ok bool
	if l.dtype, ok = dtypeOf(nl.Elem); !ok {
		return nil, unsupportedf("type %s: %s", dt, whyNotTensor(nl.Elem))
	}
	return l, nil
}

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
		if ndarray.IsBool8(dt) {
			return DataType{Code: CodeBool, Bits: 8, Lanes: 1}, true
		}
	}
	return DataType{}, false
}

func whyNotTensor(dt arrow.DataType) string {
	switch dt.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.MAP:
		return "variable-length lists are not tensors (fixed_size_list and " + tensor.ExtensionName + " are)"
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
			t = ndarray.Bool8()
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
	tt, err := tensor.NewFixedShapeType(elem, inner, nil, nil)
	if err != nil {
		return nil, err
	}
	return tt, nil
}
