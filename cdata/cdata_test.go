package cdata_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/arrio"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/cdata"
	"github.com/purearrow/cdevice/internal/testkit/cdatatest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything exported or imported across
// the C boundary is still held when all tests are done (testsupport.Main).
func TestMain(m *testing.M) { testsupport.Main(m) }

// ourAPI is this package, in the form cdatatest.Run takes.
func ourAPI() cdatatest.API {
	sc := cdata.SchemaFromPtr
	arr := cdata.ArrayFromPtr
	st := abi.At[abi.ArrayStream]
	h := abi.At[abi.AsyncDeviceStreamHandler]
	return cdatatest.API{
		Robust: true,

		ImportCArrowField:  func(p uintptr) (arrow.Field, error) { return cdata.ImportCArrowField(sc(p)) },
		ImportCArrowSchema: func(p uintptr) (*arrow.Schema, error) { return cdata.ImportCArrowSchema(sc(p)) },
		ImportCArrayWithType: func(p uintptr, dt arrow.DataType) (arrow.Array, error) {
			return cdata.ImportCArrayWithType(arr(p), dt)
		},
		ImportCArray: func(a, s uintptr) (arrow.Field, arrow.Array, error) { return cdata.ImportCArray(arr(a), sc(s)) },
		ImportCRecordBatch: func(a, s uintptr) (arrow.RecordBatch, error) {
			return cdata.ImportCRecordBatch(arr(a), sc(s))
		},
		ImportCRecordBatchWithSchema: func(a uintptr, s *arrow.Schema) (arrow.RecordBatch, error) {
			return cdata.ImportCRecordBatchWithSchema(arr(a), s)
		},
		ImportCArrayStream: func(p uintptr, s *arrow.Schema) arrio.Reader { return cdata.ImportCArrayStream(st(p), s) },
		ImportCRecordReader: func(p uintptr, s *arrow.Schema) (arrio.Reader, error) {
			return cdata.ImportCRecordReader(st(p), s)
		},

		ExportArrowSchema:      func(s *arrow.Schema, out uintptr) { cdata.ExportArrowSchema(s, sc(out)) },
		ExportArrowArray:       func(a arrow.Array, out, s uintptr) { cdata.ExportArrowArray(a, arr(out), sc(s)) },
		ExportArrowRecordBatch: func(rb arrow.RecordBatch, out, s uintptr) { cdata.ExportArrowRecordBatch(rb, arr(out), sc(s)) },
		ExportRecordReader:     func(r array.RecordReader, out uintptr) { cdata.ExportRecordReader(r, st(out)) },

		ReleaseCArrowSchema:      func(p uintptr) { cdata.ReleaseCArrowSchema(sc(p)) },
		ReleaseCArrowArray:       func(p uintptr) { cdata.ReleaseCArrowArray(arr(p)) },
		ReleaseCArrowArrayStream: func(p uintptr) { cdata.ReleaseCArrowArrayStream(st(p)) },

		CreateAsyncDeviceStreamHandler: func(ctx context.Context, n uint64, out uintptr) <-chan cdatatest.AsyncRecordBatchStream {
			return cdatatest.FromAsyncStreams(cdata.CreateAsyncDeviceStreamHandler(ctx, n, h(out)))
		},
		ExportAsyncRecordBatchStream: func(s *arrow.Schema, msgs <-chan cdatatest.RecordMessage, out uintptr) error {
			return cdata.ExportAsyncRecordBatchStream(s, cdatatest.ToMessages[cdata.RecordMessage](msgs), h(out))
		},
		AsyncStreamErrorCode: cdatatest.AsyncStreamErrorCode[cdata.AsyncStreamError],
	}
}

// TestArrowGoSuite runs the scenarios of arrow-go's own cdata test suite
// (internal/cdatatest) against this package; cgo_interop_test.go runs the
// same ones against arrow-go's.
func TestArrowGoSuite(t *testing.T) { cdatatest.Run(t, ourAPI()) }
