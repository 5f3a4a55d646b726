package cdata

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
)

// ImportCArrowField imports an ArrowSchema as a field (cdevice.ImportField).
// Nothing of the result points into C memory, and the schema is released, as
// arrow-go's is, also when the import fails.
func ImportCArrowField(out *CArrowSchema) (arrow.Field, error) {
	f, err := cdevice.ImportField(out)
	return f, compat(err)
}

// ImportCArrowSchema imports the struct-typed ArrowSchema of a record batch
// (cdevice.ImportSchema) and releases it. A schema whose top level is not a
// struct is an error wrapping arrow.ErrInvalid; import a single array's
// schema with ImportCArrowField.
func ImportCArrowSchema(out *CArrowSchema) (*arrow.Schema, error) {
	s, err := cdevice.ImportSchema(out)
	return s, compat(err)
}

// ImportCArrayWithType imports arr as an array of type dt without copying its
// buffers (cdevice.ImportArrayWithType). The root struct is moved: arr reads
// released on return and may be reused; the producer's release runs once,
// when the last arrow-go reference to the buffers is released. On failure arr
// is released too (arrow-go leaves that to the caller; releasing it again
// does nothing).
func ImportCArrayWithType(arr *CArrowArray, dt arrow.DataType) (arrow.Array, error) {
	a, err := cdevice.ImportArrayWithType(arr, dt)
	return a, compat(err)
}

// ImportCArray imports schema as a field and arr as an array of its type
// (ImportCArrowField, then ImportCArrayWithType). Both are released on
// failure.
func ImportCArray(arr *CArrowArray, schema *CArrowSchema) (arrow.Field, arrow.Array, error) {
	f, err := ImportCArrowField(schema)
	if err != nil {
		cdevice.ReleaseArray(arr)
		return f, nil, err
	}
	a, err := ImportCArrayWithType(arr, f.Type)
	return f, a, err
}

// ImportCRecordBatchWithSchema imports a struct array as a record batch of
// schema sc (cdevice.ImportRecordBatchWithSchema), when the schema is already
// known, as for the batches of a stream. Ownership is as for
// ImportCArrayWithType.
func ImportCRecordBatchWithSchema(arr *CArrowArray, sc *arrow.Schema) (arrow.RecordBatch, error) {
	rb, err := cdevice.ImportRecordBatchWithSchema(arr, sc)
	return rb, compat(err)
}

// ImportCRecordBatch imports a struct array and its struct-typed schema as a
// record batch, one column per child (cdevice.ImportRecordBatch). The schema
// is released; the array's ownership is as for ImportCArrayWithType.
func ImportCRecordBatch(arr *CArrowArray, sc *CArrowSchema) (arrow.RecordBatch, error) {
	rb, err := cdevice.ImportRecordBatch(arr, sc)
	return rb, compat(err)
}
