package stream

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
)

// An exporter is the Go side of a stream we exported; its callbacks are
// serialized by mu, so C threads calling at once cannot race.
type exporter struct {
	mu       sync.Mutex
	schema   *arrow.Schema
	noSchema func() error          // why schema is nil: the reader's Err
	next     func() (batch, error) // nil batch: the end
	stop     func()
	lastErr  unsafe.Pointer // C string from the last failed call, or nil
	released bool
	leak     leak.Object
}

// start counts the export as live and returns its handle, the stream's
// private_data.
func (e *exporter) start() uintptr {
	e.leak = leak.Track(leak.ExportedStream)
	return uintptr(ffi.NewHandle(e))
}

// A batch is what an exporter hands out: a record batch for an
// ArrowArrayStream, a device record batch for an ArrowDeviceArrayStream.
type batch interface{ Release() }

// fail records err for get_last_error and returns its code.
func (e *exporter) fail(err error) uintptr {
	e.clearError()
	e.lastErr, _ = ffi.CString(err.Error())
	return uintptr(uint32(cdevice.ErrnoOf(err)))
}

func (e *exporter) clearError() {
	ffi.Free(e.lastErr)
	e.lastErr = nil
}

// call runs f for a live stream under the lock: every callback goes
// through it.
func call(privateData uintptr, f func(e *exporter) uintptr) uintptr {
	e := exporterOf(privateData)
	if e == nil {
		return uintptr(cdevice.EINVAL)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return uintptr(cdevice.EINVAL)
	}
	return f(e)
}

func (e *exporter) getSchema(out *abi.Schema) uintptr {
	e.clearError()
	if out == nil {
		return e.fail(fmt.Errorf("%w: get_schema: NULL out", cdevice.ErrInvalid))
	}
	if e.schema == nil && e.noSchema != nil {
		if err := e.noSchema(); err != nil {
			return e.fail(err) // a reader that failed before it had a schema
		}
	}
	if err := cdevice.ExportSchema(e.schema, out); err != nil {
		return e.fail(err)
	}
	return 0
}

// nextBatch returns the next batch (nil at the end), checked against the
// stream's schema.
func (e *exporter) nextBatch() (batch, error) {
	e.clearError()
	b, err := e.next()
	if err != nil || b == nil {
		return nil, err
	}
	var sc *arrow.Schema
	switch b := b.(type) {
	case arrow.RecordBatch:
		sc = b.Schema()
	case *cdevice.DeviceRecordBatch:
		sc = b.Schema
	}
	if sc != e.schema && !sc.Equal(e.schema) {
		b.Release()
		return nil, fmt.Errorf("%w: a batch's schema %s differs from the stream's %s", cdevice.ErrInvalid, sc, e.schema)
	}
	return b, nil
}

func (e *exporter) release(handle uintptr) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return
	}
	e.released = true
	e.stop()
	e.clearError()
	ffi.Handle(handle).Delete()
	e.leak.Done()
}

// streamCallbacks are the four C functions of one kind of exported stream.
type streamCallbacks struct{ getSchema, getNext, getLastError, release *ffi.Callback }

// newStreamCallbacks builds them for a stream struct whose private_data and
// release fields (fields) and batch export (export, end) are its own.
func newStreamCallbacks(kind string, fields func(s uintptr) (privateData, release *uintptr),
	export func(s, out uintptr, b batch) error, end func(out uintptr)) streamCallbacks {
	pd := func(s uintptr) uintptr { p, _ := fields(s); return *p }
	return streamCallbacks{
		getSchema: ffi.NewCallback2(kind+".get_schema", func(s, out uintptr) uintptr {
			return call(pd(s), func(e *exporter) uintptr { return e.getSchema((*abi.Schema)(abi.Pointer(out))) })
		}),
		getNext: ffi.NewCallback2(kind+".get_next", func(s, out uintptr) uintptr {
			return call(pd(s), func(e *exporter) uintptr {
				return e.getNext(func(b batch) error { return export(s, out, b) }, func() { end(out) }, out)
			})
		}),
		getLastError: ffi.NewCallback1(kind+".get_last_error", func(s uintptr) uintptr { return lastError(pd(s)) }),
		release: ffi.NewCallback1(kind+".release", func(s uintptr) uintptr {
			if p, rel := fields(s); *rel != 0 {
				releaseExporter(*p)
				*rel, *p = 0, 0
			}
			return 0
		}),
	}
}

var arrayStreamCallbacks = newStreamCallbacks("ArrowArrayStream",
	func(s uintptr) (*uintptr, *uintptr) { st := arrayStreamAt(s); return &st.PrivateData, &st.Release },
	func(_, out uintptr, b batch) error {
		return cdevice.ExportRecordBatch(b.(arrow.RecordBatch), (*abi.Array)(abi.Pointer(out)), nil)
	},
	func(out uintptr) { *(*abi.Array)(abi.Pointer(out)) = abi.Array{} })

// arrayStreamRelease identifies our own ArrowArrayStreams on import.
var arrayStreamRelease = arrayStreamCallbacks.release

func arrayStreamAt(p uintptr) *abi.ArrayStream { return (*abi.ArrayStream)(abi.Pointer(p)) }

// getNext exports the next batch with export, or marks out released with
// end at the end of the stream.
func (e *exporter) getNext(export func(batch) error, end func(), out uintptr) uintptr {
	if out == 0 {
		return e.fail(fmt.Errorf("%w: get_next: NULL out", cdevice.ErrInvalid))
	}
	b, err := e.nextBatch()
	if err != nil {
		return e.fail(err)
	}
	if b == nil {
		end()
		return 0
	}
	err = export(b)
	if _, ok := b.(*cdevice.DeviceRecordBatch); ok {
		b.Release() // the export holds its own reference
	}
	if err != nil {
		return e.fail(err)
	}
	return 0
}

// exporterOf returns the exporter behind a handle, or nil for a released
// stream, garbage, or another kind of handle.
func exporterOf(privateData uintptr) *exporter {
	e, _ := ffi.Lookup[*exporter](privateData)
	return e
}

func lastError(privateData uintptr) uintptr {
	e := exporterOf(privateData)
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return uintptr(e.lastErr)
}

func releaseExporter(privateData uintptr) {
	if e := exporterOf(privateData); e != nil {
		e.release(privateData)
	}
}

// ExportReader exports rdr as an ArrowArrayStream into out. rdr is retained
// until the consumer releases the stream; batches are exported zero-copy.
func ExportReader(rdr array.RecordReader, out *abi.ArrayStream) error {
	if rdr == nil || out == nil {
		return fmt.Errorf("%w: ExportReader: nil reader or out", cdevice.ErrInvalid)
	}
	rdr.Retain()
	e := &exporter{schema: rdr.Schema(), noSchema: rdr.Err, stop: rdr.Release}
	e.next = func() (batch, error) {
		if rdr.Next() {
			return rdr.RecordBatch(), nil
		}
		return nil, rdr.Err()
	}
	cb := &arrayStreamCallbacks
	*out = abi.ArrayStream{
		GetSchema:    cb.getSchema.Ptr(),
		GetNext:      cb.getNext.Ptr(),
		GetLastError: cb.getLastError.Ptr(),
		Release:      cb.release.Ptr(),
		PrivateData:  e.start(),
	}
	return nil
}

var deviceStreamCallbacks = newStreamCallbacks("ArrowDeviceArrayStream",
	func(s uintptr) (*uintptr, *uintptr) { st := deviceStreamAt(s); return &st.PrivateData, &st.Release },
	func(s, out uintptr, b batch) error {
		db, t := b.(*cdevice.DeviceRecordBatch), deviceStreamAt(s).DeviceType
		if db.Device() != nil && db.Device().Type() != t {
			return fmt.Errorf("%w: a batch on %s in a %s stream", cdevice.ErrInvalid, db.Device().Type(), t)
		}
		return db.Export((*abi.DeviceArray)(abi.Pointer(out)), nil)
	},
	func(out uintptr) { *(*abi.DeviceArray)(abi.Pointer(out)) = abi.DeviceArray{} })

func deviceStreamAt(p uintptr) *abi.DeviceArrayStream {
	return (*abi.DeviceArrayStream)(abi.Pointer(p))
}

// ExportDeviceStream exports batches, device record batches of schema sc on
// devices of type deviceType, as an ArrowDeviceArrayStream into out. Each
// batch is exported with its sync event and then released (the export holds
// its own reference); a batch on another device type fails the stream.
//
// Of the options only WithOnRelease applies.
func ExportDeviceStream(sc *arrow.Schema, deviceType abi.DeviceType, batches iter.Seq2[*cdevice.DeviceRecordBatch, error], out *abi.DeviceArrayStream, opts ...Option) error {
	release := newConfig(opts).onRelease
	if release == nil {
		release = func() {}
	}
	return exportDeviceStream(sc, deviceType, batches, release, out)
}

// exportDeviceStream is ExportDeviceStream with cleanup run at release
// (iter.Pull2's stop does not run a sequence that never started).
func exportDeviceStream(sc *arrow.Schema, deviceType abi.DeviceType, batches iter.Seq2[*cdevice.DeviceRecordBatch, error], cleanup func(), out *abi.DeviceArrayStream) error {
	if sc == nil || batches == nil || out == nil {
		return fmt.Errorf("%w: ExportDeviceStream: nil schema, batches or out", cdevice.ErrInvalid)
	}
	p := newPuller(batches)
	e := &exporter{schema: sc, stop: func() { p.stop(); cleanup() }}
	e.next = func() (batch, error) {
		b, err, ok := p.next()
		switch {
		case !ok:
			return nil, nil
		case err != nil:
			if b != nil {
				b.Release()
			}
			return nil, err
		case b == nil:
			return nil, fmt.Errorf("%w: the batch source yielded a nil batch", cdevice.ErrInvalid)
		}
		return b, nil
	}
	cb := &deviceStreamCallbacks
	*out = abi.DeviceArrayStream{
		DeviceType:   deviceType,
		GetSchema:    cb.getSchema.Ptr(),
		GetNext:      cb.getNext.Ptr(),
		GetLastError: cb.getLastError.Ptr(),
		Release:      cb.release.Ptr(),
		PrivateData:  e.start(),
	}
	return nil
}

// ExportReaderToDevice exports rdr as an ArrowDeviceArrayStream on dev,
// copying each batch to dev when the consumer asks for it.
func ExportReaderToDevice(ctx context.Context, rdr array.RecordReader, dev device.Device, out *abi.DeviceArrayStream) error {
	if rdr == nil || dev == nil {
		return fmt.Errorf("%w: ExportReaderToDevice: nil reader or device", cdevice.ErrInvalid)
	}
	rdr.Retain() // the schema and the sequence use it until release
	batches := cdevice.CopyReaderToDevice(ctx, rdr, dev)
	if err := exportDeviceStream(rdr.Schema(), dev.Type(), batches, rdr.Release, out); err != nil {
		rdr.Release()
		return err
	}
	return nil
}
