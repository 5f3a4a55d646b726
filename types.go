package cdevice

// How arrow-go types map onto the C interface: which buffers and children
// of a type the C structs carry, and the bounds on their sizes.

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// storageType returns the type whose physical layout an array of dt has:
// extension types are laid out as their storage, everything else as itself.
func storageType(dt arrow.DataType) arrow.DataType {
	for dt.ID() == arrow.EXTENSION { // cheaper than an interface assertion
		dt = dt.(arrow.ExtensionType).StorageType()
	}
	return dt
}

// firstCBuffer is the index of arrow-go's first buffer that the C interface
// carries: unions have no validity bitmap in C, null and run-end-encoded
// arrays have no buffers at all, while arrow-go keeps a leading nil for them.
func firstCBuffer(id arrow.Type, goBuffers int) int {
	switch id {
	case arrow.NULL, arrow.RUN_END_ENCODED:
		return goBuffers
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return min(1, goBuffers)
	}
	return 0
}

// numChildFields is the number of C children of a storage type.
func numChildFields(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.FIXED_SIZE_LIST, arrow.MAP:
		return 1
	case arrow.RUN_END_ENCODED:
		return 2
	case arrow.STRUCT:
		return dt.(*arrow.StructType).NumFields()
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return dt.(arrow.NestedType).NumFields()
	}
	return 0
}

// childField returns C child i of a storage type (numChildFields(dt) > i).
func childField(dt arrow.DataType, i int) arrow.Field {
	switch t := dt.(type) {
	case *arrow.StructType:
		return t.Field(i)
	case arrow.UnionType:
		return t.Fields()[i]
	case *arrow.RunEndEncodedType:
		if i == 0 {
			return arrow.Field{Name: "run_ends", Type: t.RunEnds()}
		}
		return arrow.Field{Name: "values", Type: t.Encoded(), Nullable: t.ValueNullable}
	case arrow.ListLikeType:
		return t.ElemField()
	}
	return dt.(arrow.NestedType).Fields()[i]
}

// maxElements bounds offset+length of any array: beyond it the byte sizes
// of its buffers (up to 32 bytes an element, and bit counts rounded up)
// could overflow int64. No real array comes near it.
const maxElements = math.MaxInt64 / 64

// Metadata keys that carry an extension type through the C interface.
const (
	extensionNameKey     = "ARROW:extension:name"
	extensionMetadataKey = "ARROW:extension:metadata"
)

// hostBytesAt views n bytes at p+off of host-accessible memory.
func hostBytesAt(p device.Pointer, off, n int64) []byte {
	return unsafe.Slice((*byte)(abi.Pointer(uintptr(p)+uintptr(off))), n)
}
