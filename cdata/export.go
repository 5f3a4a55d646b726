package cdata

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/stream"
)

// The export functions return no error, as arrow-go's do; where arrow-go
// panics on input it cannot export, they leave the output released
// (release = NULL), which is how a consumer tells an unusable struct. The
// cdevice functions they call return the error.

// ExportArrowSchema exports schema into out as a struct-typed ArrowSchema
// whose children are its fields (cdevice.ExportSchema). out may be Go or C
// memory; what it points to is off the Go heap or pinned until its release.
func ExportArrowSchema(schema *arrow.Schema, out *CArrowSchema) {
	released(cdevice.ExportSchema(schema, out), out)
}

// ExportArrowRecordBatch exports rb into out as a struct array, one child per
// column, without copying its buffers, and its schema into outSchema unless
// that is nil (cdevice.ExportRecordBatch). rb is retained, and its buffers
// stay pinned, until C releases every exported node: rb may be released at
// once.
func ExportArrowRecordBatch(rb arrow.RecordBatch, out *CArrowArray, outSchema *CArrowSchema) {
	err := cdevice.ExportRecordBatch(rb, out, outSchema)
	released(err, out)
	released(err, outSchema)
}

// ExportArrowArray exports arr into out without copying its buffers, and its
// type into outSchema unless that is nil, as arrow-go does: a field with an
// empty name, not nullable (flags 0; cdevice.ExportArray's is nullable).
// Lifetimes are as for ExportArrowRecordBatch.
func ExportArrowArray(arr arrow.Array, out *CArrowArray, outSchema *CArrowSchema) {
	var err error
	if outSchema != nil && arr != nil {
		err = cdevice.ExportField(arrow.Field{Type: arr.DataType()}, outSchema)
	}
	if err == nil {
		if err = cdevice.ExportArray(arr, out, nil); err != nil && outSchema != nil && arr != nil {
			cdevice.ReleaseSchema(outSchema)
		}
	}
	released(err, out)
	released(err, outSchema)
}

// ExportRecordReader exports reader as an ArrowArrayStream into out
// (stream.ExportReader). The reader is retained until the consumer releases
// the stream, and each batch is exported without copying.
func ExportRecordReader(reader array.RecordReader, out *CArrowArrayStream) {
	released(stream.ExportReader(reader, out), out)
}

// released makes sure that, when an export failed, out reads released: the
// export leaves what it did not fill as the caller passed it, and gives back
// what it filled.
func released[T cdevice.Struct](err error, out *T) {
	if err != nil && out != nil {
		*out = *new(T)
	}
}

// ReleaseCArrowSchema calls schema's release callback unless it is already
// released (cdevice.ReleaseSchema).
func ReleaseCArrowSchema(schema *CArrowSchema) { cdevice.ReleaseSchema(schema) }

// ReleaseCArrowArray calls arr's release callback unless it is already
// released (cdevice.ReleaseArray).
func ReleaseCArrowArray(arr *CArrowArray) { cdevice.ReleaseArray(arr) }

// ReleaseCArrowArrayStream calls stream's release callback unless it is
// already released (cdevice.ReleaseArrayStream).
func ReleaseCArrowArrayStream(stream *CArrowArrayStream) { cdevice.ReleaseArrayStream(stream) }
