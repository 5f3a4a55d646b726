package cdata

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/arrio"
	"github.com/purearrow/cdevice/stream"
)

// ImportCRecordReader imports an ArrowArrayStream (stream.ImportReader): it
// moves the stream into the reader, so the caller's struct reads released
// and may be reused, and imports its schema now; an error there releases the
// stream. As with arrow-go, the schema argument is not used: the stream's
// own schema is.
//
// The result is an arrio.Reader that also implements array.RecordReader. A
// batch it returns is valid until the next Read or Next (Retain it to keep
// it); Read returns (nil, io.EOF) at the end, and Err then says io.EOF too,
// as arrow-go's. The stream is released when the reader's reference count
// drops to zero (Release), or when it is garbage collected.
func ImportCRecordReader(stream *CArrowArrayStream, schema *arrow.Schema) (arrio.Reader, error) {
	return importReader(stream)
}

// ImportCArrayStream is ImportCRecordReader without its error: where
// arrow-go panics, it returns a reader whose Read and Err report the error
// and whose Schema is nil.
//
// Deprecated: use ImportCRecordReader, as arrow-go advises.
func ImportCArrayStream(stream *CArrowArrayStream, schema *arrow.Schema) arrio.Reader {
	r, err := importReader(stream)
	if err != nil {
		return failedReader{err}
	}
	return r
}

func importReader(s *CArrowArrayStream) (arrio.Reader, error) {
	r, err := stream.ImportReader(s)
	if err != nil {
		return nil, compat(err)
	}
	return &reader{Reader: r}, nil
}

// A reader is an imported stream as arrow-go's cdata hands it out: an
// array.RecordReader with arrio.Reader's Read, and arrow-go's errors.
type reader struct {
	*stream.Reader
	eof bool // Read said io.EOF: so does Err, as arrow-go's
}

// Read returns the next batch, valid until the next Read or Next.
func (r *reader) Read() (arrow.RecordBatch, error) {
	if r.Next() {
		return r.RecordBatch(), nil
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	r.eof = true
	return nil, io.EOF
}

func (r *reader) Err() error {
	if err := r.Reader.Err(); err != nil || !r.eof {
		return compat(err)
	}
	return io.EOF
}

// failedReader is a stream whose import failed, for ImportCArrayStream.
type failedReader struct{ err error }

func (r failedReader) Read() (arrow.RecordBatch, error) { return nil, r.err }
func (r failedReader) Next() bool                       { return false }
func (r failedReader) Err() error                       { return r.err }
func (r failedReader) Schema() *arrow.Schema            { return nil }
func (r failedReader) RecordBatch() arrow.RecordBatch   { return nil }
func (r failedReader) Record() arrow.RecordBatch        { return nil }
func (r failedReader) Retain()                          {}
func (r failedReader) Release()                         {}

var (
	_ array.RecordReader = (*reader)(nil)
	_ arrio.Reader       = (*reader)(nil)
	_ array.RecordReader = failedReader{}
	_ arrio.Reader       = failedReader{}
)
