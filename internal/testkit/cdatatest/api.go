package cdatatest

import (
	"context"
	"errors"

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

// The implementations' RecordMessage, AsyncRecordBatchStream and
// AsyncStreamError are distinct types of one shape each. The shapes, stated
// once here, are the mirrors' and let the helpers below convert either
// implementation's values to and from the mirrors (the build fails where an
// implementation's type has another shape).
type (
	messageShape = struct {
		Record             arrow.RecordBatch
		AdditionalMetadata arrow.Metadata
		Err                error
	}
	streamShape[M any] = struct {
		Schema             *arrow.Schema
		AdditionalMetadata arrow.Metadata
		Err                error
		Stream             <-chan M
	}
	errorShape = struct {
		Code     int
		Msg      string
		Metadata string
	}
)

// RecordMessage mirrors cdata.RecordMessage.
type RecordMessage messageShape

// AsyncRecordBatchStream mirrors cdata.AsyncRecordBatchStream.
type AsyncRecordBatchStream streamShape[RecordMessage]

// FromAsyncStreams is API.CreateAsyncDeviceStreamHandler's result from an
// implementation's: it forwards the one stream in (a channel that may stay
// open after it), its messages converted, and closes.
func FromAsyncStreams[S interface{ ~streamShape[M] }, M interface{ ~messageShape }](in <-chan S) <-chan AsyncRecordBatchStream {
	out := make(chan AsyncRecordBatchStream, 1)
	go func() {
		defer close(out)
		if s, ok := <-in; ok {
			v := streamShape[M](s)
			out <- AsyncRecordBatchStream{
				Schema: v.Schema, AdditionalMetadata: v.AdditionalMetadata, Err: v.Err,
				Stream: convert(v.Stream, func(m M) RecordMessage { return RecordMessage(m) }),
			}
		}
	}()
	return out
}

// ToMessages is API.ExportAsyncRecordBatchStream's stream as an
// implementation's RecordMessage channel M.
func ToMessages[M interface{ ~messageShape }](in <-chan RecordMessage) <-chan M {
	return convert(in, func(m RecordMessage) M { return M(m) })
}

// AsyncStreamErrorCode is API.AsyncStreamErrorCode for an implementation
// whose AsyncStreamError is E.
func AsyncStreamErrorCode[E interface {
	error
	~errorShape
}](err error) (int, bool) {
	var e E
	if !errors.As(err, &e) {
		return 0, false
	}
	return errorShape(e).Code, true
}

// convert forwards every value of in, converted by f, to the channel it
// returns, and closes that when in is closed. A nil in gives nil.
func convert[A, B any](in <-chan A, f func(A) B) <-chan B {
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
