package stream_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// readErr imports s and reads it to its end, returning the error of the
// import or the one that ended the stream.
func readErr(s *abi.ArrayStream, opts ...stream.Option) error {
	r, err := stream.ImportReader(s, opts...)
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// deviceErr imports s and reads it with ctx to its end (nil there).
func deviceErr(ctx context.Context, s *abi.DeviceArrayStream, opts ...stream.Option) error {
	r, err := stream.ImportDeviceStream(s, opts...)
	if err != nil {
		return err
	}
	defer r.Release()
	for _, err := range r.All(ctx) {
		if err != nil {
			return err
		}
	}
	return nil
}

// hxDeviceStream makes a hostile ArrowDeviceArrayStream of the given kind.
func hxDeviceStream(t *testing.T, kind, rows int) *abi.DeviceArrayStream {
	t.Helper()
	s := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if rc := int32(hxFn(t, "hx_make_device_stream")(cstPtr(s), uintptr(kind), uintptr(rows))); rc != 0 {
		t.Fatalf("hx_make_device_stream = %d", rc)
	}
	t.Cleanup(func() { hxFn(t, "hx_stream_forget")() })
	return s
}

// cpuDeviceStream is stream.c's CPU device stream of batches of 3 rows.
func cpuDeviceStream(t *testing.T, batches int, failAt uintptr) *abi.DeviceArrayStream {
	t.Helper()
	s := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if rc := int32(cstFn(t, "st_make_device_stream_cpu")(cstPtr(s), uintptr(batches), 3, failAt)); rc != 0 {
		t.Fatalf("st_make_device_stream_cpu = %d", rc)
	}
	return s
}

var errSource = errors.New("the source broke")

// failing exports a reader that fails with errSource after one batch.
func failing(t *testing.T) *abi.ArrayStream {
	return cstExport(t, &cstFailingReader{recs: cstBatches(t, 2, 3, 0), failAfter: 1, err: errSource})
}

// corruptReader is a reader of one utf8 batch whose offsets decrease.
func corruptReader(t *testing.T) array.RecordReader {
	offs := arrow.Int32Traits.CastToBytes([]int32{0, 3, 1})
	col := array.MakeFromData(array.NewData(arrow.BinaryTypes.String, 2,
		[]*memory.Buffer{nil, memory.NewBufferBytes(offs), memory.NewBufferBytes([]byte("abc"))}, nil, 0, 0))
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: col.DataType()}}, nil)
	rb := array.NewRecordBatch(sc, []arrow.Array{col}, 2)
	defer rb.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rb})
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// TestErrorPaths drives every exported function of the package into
// failure (bad arguments, released streams, producers that fail or lie,
// contexts done) and checks that each error wraps its path's documented
// sentinel.
func TestErrorPaths(t *testing.T) {
	hxNoLeaks(t)
	ctx := context.Background()
	cases := []testsupport.ErrorCase{
		testsupport.Case("ImportReader/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := stream.ImportReader(nil)
			return err
		}),
		testsupport.Case("ImportReader/released", stream.ErrReleased, func(t *testing.T) error {
			_, err := stream.ImportReader(testsupport.OffHeap[abi.ArrayStream](t))
			return err
		}),
		testsupport.Case("ImportReader/NULL get_schema", cdevice.ErrInvalid, func(t *testing.T) error {
			return readErr(hxStream(t, 1, 3, 1))
		}),
		testsupport.Case("ImportReader/get_schema fails", cdevice.ErrProducer, func(t *testing.T) error {
			return readErr(cstMakeStream(t, 2, 3, true, -1, false))
		}),
		testsupport.Case("Reader.Err/get_next fails", cdevice.ErrProducer, func(t *testing.T) error {
			return readErr(cstMakeStream(t, 3, 3, false, 2, false))
		}),
		testsupport.Case("Reader.Err/get_next fails without a message", cdevice.ErrProducer, func(t *testing.T) error {
			return readErr(hxStream(t, 2, 3, 0))
		}),
		testsupport.Case("Reader.Err/empty batches", stream.ErrEmptyBatches, func(t *testing.T) error {
			return readErr(hxStream(t, 0, 0, 0), stream.WithMaxEmptyBatches(3))
		}),
		testsupport.Case("Reader.Err/full validation", cdevice.ErrInvalid, func(t *testing.T) error {
			return readErr(cstExport(t, corruptReader(t)), stream.WithImportOptions(cdevice.WithFullValidation()))
		}),
		testsupport.Case("Reader.Err/our export's source failed", cdevice.ErrProducer, func(t *testing.T) error {
			return readErr(failing(t))
		}),
		testsupport.Case("Reader.Err/our export's source failed, read directly", cdevice.ErrProducer, func(t *testing.T) error {
			defer identity.Set(identity.Set(true))
			err := readErr(failing(t))
			var pe *cdevice.ProducerError
			if !errors.Is(err, errSource) || !errors.As(err, &pe) || pe.Call != "get_next" {
				t.Errorf("%v: not a get_next ProducerError wrapping the source's error", err)
			}
			return err
		}),
		testsupport.Case("Reader.All/canceled", context.Canceled, func(t *testing.T) error {
			r, err := stream.ImportReader(cstMakeStream(t, 3, 3, false, -1, false))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			for _, err := range r.All(testsupport.CanceledContext()) {
				return err
			}
			return nil
		}),
		testsupport.Case("ImportDeviceStream/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := stream.ImportDeviceStream(nil)
			return err
		}),
		testsupport.Case("ImportDeviceStream/released", stream.ErrReleased, func(t *testing.T) error {
			_, err := stream.ImportDeviceStream(testsupport.OffHeap[abi.DeviceArrayStream](t))
			return err
		}),
		testsupport.Case("DeviceReader.Next/get_next fails", cdevice.ErrProducer, func(t *testing.T) error {
			return deviceErr(ctx, cpuDeviceStream(t, 3, 2))
		}),
		testsupport.Case("DeviceReader.Next/batch on another device type", cdevice.ErrInvalid, func(t *testing.T) error {
			return deviceErr(ctx, hxDeviceStream(t, 4, 3))
		}),
		testsupport.Case("DeviceReader.Next/empty batches", stream.ErrEmptyBatches, func(t *testing.T) error {
			return deviceErr(ctx, hxDeviceStream(t, 0, 0), stream.WithMaxEmptyBatches(3))
		}),
		testsupport.Case("DeviceReader.Next/canceled", context.Canceled, func(t *testing.T) error {
			return deviceErr(testsupport.CanceledContext(), cpuDeviceStream(t, 3, cstNever))
		}),
		testsupport.Case("DeviceReader.HostRecords/canceled", context.Canceled, func(t *testing.T) error {
			r, err := stream.ImportDeviceStream(cpuDeviceStream(t, 3, cstNever))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			for _, err := range r.HostRecords(testsupport.CanceledContext()) {
				return err
			}
			return nil
		}),
		testsupport.Case("ExportReader/nil reader", cdevice.ErrInvalid, func(t *testing.T) error {
			return stream.ExportReader(nil, testsupport.OffHeap[abi.ArrayStream](t))
		}),
		testsupport.Case("ExportReader/nil out", cdevice.ErrInvalid, func(t *testing.T) error {
			rdr := cstReader(t, nil)
			defer rdr.Release()
			return stream.ExportReader(rdr, nil)
		}),
		testsupport.Case("ExportDeviceStream/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			return stream.ExportDeviceStream(nil, abi.DeviceCPU, nil, testsupport.OffHeap[abi.DeviceArrayStream](t))
		}),
		testsupport.Case("ExportDeviceStream/the source's error read back", cdevice.ErrProducer, func(t *testing.T) error {
			s := testsupport.OffHeap[abi.DeviceArrayStream](t)
			var batches iter.Seq2[*cdevice.DeviceRecordBatch, error] = func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
				yield(nil, errSource)
			}
			if err := stream.ExportDeviceStream(cstSchema, abi.DeviceCPU, batches, s); err != nil {
				t.Fatal(err)
			}
			return deviceErr(ctx, s)
		}),
		testsupport.Case("ExportReaderToDevice/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			return stream.ExportReaderToDevice(ctx, nil, device.CPU, testsupport.OffHeap[abi.DeviceArrayStream](t))
		}),
		testsupport.Case("ExportReaderToDevice/canceled, read back", cdevice.ErrProducer, func(t *testing.T) error {
			s := testsupport.OffHeap[abi.DeviceArrayStream](t)
			rdr := cstReader(t, cstBatches(t, 2, 3, 0))
			defer rdr.Release()
			if err := stream.ExportReaderToDevice(testsupport.CanceledContext(), rdr, device.CPU, s); err != nil {
				t.Fatal(err)
			}
			return deviceErr(ctx, s)
		}),
	}
	testsupport.RunErrorCases(t, cases)
}

// schemaless is a reader that failed before it had a schema.
type schemaless struct{ array.RecordReader }

func (schemaless) Schema() *arrow.Schema          { return nil }
func (schemaless) Next() bool                     { return false }
func (schemaless) Err() error                     { return errSource }
func (schemaless) RecordBatch() arrow.RecordBatch { return nil }
func (schemaless) Retain()                        {}
func (schemaless) Release()                       {}

// get_schema of an exported reader without a schema reports the reader's
// error (as arrow-go's exporter does), through the C path and ours.
func TestExportedReaderWithoutSchema(t *testing.T) {
	for _, direct := range []bool{true, false} {
		old := identity.Set(direct)
		_, err := stream.ImportReader(cstExport(t, schemaless{}))
		identity.Set(old)
		var pe *cdevice.ProducerError
		if !errors.As(err, &pe) || pe.Call != "get_schema" || pe.Message != errSource.Error() {
			t.Errorf("identity %v: ImportReader: %v, want get_schema's ProducerError carrying %q", direct, err, errSource)
		}
	}
}

// WithOnRelease runs once when the consumer releases an exported device
// stream: after reading it all, part of it, or none of it (a sequence that
// never started is never told otherwise).
func TestExportDeviceStreamOnRelease(t *testing.T) {
	for _, read := range []int{0, 1, 3} {
		t.Run(fmt.Sprint("read ", read), func(t *testing.T) {
			recs := cstBatches(t, 3, 2, 0)
			var started, released atomic.Int32
			batches := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
				started.Add(1)
				for _, rec := range recs {
					db, err := cdevice.CPURecordBatch(rec)
					if !yield(db, err) {
						return
					}
				}
			}
			s := testsupport.OffHeap[abi.DeviceArrayStream](t)
			if err := stream.ExportDeviceStream(cstSchema, abi.DeviceCPU, batches, s, stream.WithOnRelease(func() { released.Add(1) })); err != nil {
				t.Fatal(err)
			}
			r, err := stream.ImportDeviceStream(s)
			if err != nil {
				t.Fatal(err)
			}
			for n := 0; n < read; n++ {
				b, err := r.Next(context.Background())
				if err != nil || b == nil {
					t.Fatalf("batch %d: %v, %v", n, b, err)
				}
				b.Release()
			}
			if released.Load() != 0 {
				t.Error("the release hook ran before the stream was released")
			}
			r.Release()
			if got := released.Load(); got != 1 {
				t.Errorf("release hook ran %d times, want 1", got)
			}
			if read == 0 && started.Load() != 0 {
				t.Error("the sequence started though nothing was read")
			}
		})
	}
}
