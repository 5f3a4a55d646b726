package cdatatest

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/arrio"
)

// API is one implementation of arrow-go's cdata API. Each field is the
// package function of the same name, with every struct pointer passed as the
// struct's address (0 for nil), so that packages whose struct types differ
// can fill it.
type API struct {
	// Robust is true where bad input gets an error or a released output
	// struct instead of a panic (ours); false for arrow-go, which panics.
	Robust bool

	ImportCArrowField            func(sc uintptr) (arrow.Field, error)
	ImportCArrowSchema           func(sc uintptr) (*arrow.Schema, error)
	ImportCArrayWithType         func(arr uintptr, dt arrow.DataType) (arrow.Array, error)
	ImportCArray                 func(arr, sc uintptr) (arrow.Field, arrow.Array, error)
	ImportCRecordBatch           func(arr, sc uintptr) (arrow.RecordBatch, error)
	ImportCRecordBatchWithSchema func(arr uintptr, sc *arrow.Schema) (arrow.RecordBatch, error)
	ImportCArrayStream           func(st uintptr, sc *arrow.Schema) arrio.Reader
	ImportCRecordReader          func(st uintptr, sc *arrow.Schema) (arrio.Reader, error)

	ExportArrowSchema      func(sc *arrow.Schema, out uintptr)
	ExportArrowArray       func(arr arrow.Array, out, outSchema uintptr)
	ExportArrowRecordBatch func(rb arrow.RecordBatch, out, outSchema uintptr)
	ExportRecordReader     func(rdr array.RecordReader, out uintptr)

	ReleaseCArrowSchema      func(sc uintptr)
	ReleaseCArrowArray       func(arr uintptr)
	ReleaseCArrowArrayStream func(st uintptr)

	CreateAsyncDeviceStreamHandler func(ctx context.Context, queueSize uint64, out uintptr) <-chan AsyncRecordBatchStream
	ExportAsyncRecordBatchStream   func(sc *arrow.Schema, stream <-chan RecordMessage, handler uintptr) error
	// AsyncStreamErrorCode is errors.As(err, &AsyncStreamError) and its Code.
	AsyncStreamErrorCode func(err error) (code int, ok bool)
}

// RecordMessage mirrors cdata.RecordMessage.
type RecordMessage struct {
	Record             arrow.RecordBatch
	AdditionalMetadata arrow.Metadata
	Err                error
}

// AsyncRecordBatchStream mirrors cdata.AsyncRecordBatchStream.
type AsyncRecordBatchStream struct {
	Schema             *arrow.Schema
	AdditionalMetadata arrow.Metadata
	Err                error
	Stream             <-chan RecordMessage
}

// Convert forwards every value of in, converted by f, to the channel it
// returns, and closes that when in is closed. A nil in gives nil.
func Convert[A, B any](in <-chan A, f func(A) B) <-chan B {
	if in == nil {
		return nil
	}
	out := make(chan B)
	go func() {
		defer close(out)
		for v := range in {
			out <- f(v)
		}
	}()
	return out
}

// ConvertOne is Convert for a channel that carries one value and may stay
// open after it (CreateAsyncDeviceStreamHandler's): it forwards the first
// value and closes.
func ConvertOne[A, B any](in <-chan A, f func(A) B) <-chan B {
	out := make(chan B, 1)
	go func() {
		defer close(out)
		if v, ok := <-in; ok {
			out <- f(v)
		}
	}()
	return out
}
