package stream

import (
	"context"
	"fmt"
	"io"
	"iter"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/leak"
)

// A cstream is an imported stream of either kind: our copy of the C struct
// (moved from the caller's, and passed to its functions), its functions,
// the schema, and when it is a stream this package exported, the exporter,
// read directly.
type cstream struct {
	self                                      unsafe.Pointer
	getSchema, getNext, getLastError, release uintptr
	schema                                    *arrow.Schema
	cfg                                       config
	empties                                   int
	refs                                      atomic.Int64
	direct                                    *exporter
	leak                                      leak.Object
}

func (c *cstream) init(self unsafe.Pointer, getSchema, getNext, getLastError, release, privateData uintptr, ours bool, opts []Option) error {
	*c = cstream{self: self, getSchema: getSchema, getNext: getNext, getLastError: getLastError, release: release}
	c.cfg.apply(opts)
	c.refs.Store(1)
	c.leak = leak.Track(leak.ImportedStream)
	if getSchema == 0 || getNext == 0 {
		c.releaseC()
		return fmt.Errorf("%w: the stream's get_schema or get_next is NULL", cdevice.ErrInvalid)
	}
	if ours && identity.Enabled() {
		// Without a schema, get_schema says why: take the C path.
		if e, ok := ffi.Lookup[*exporter](privateData); ok && e.schema != nil {
			c.direct = e
			c.schema = e.schema
			return nil
		}
	}
	sch := cdevice.New[abi.Schema]() // C fills it and keeps pointers in it
	defer cdevice.Free(sch)
	if rc := int32(ffi.Call(getSchema, uintptr(self), uintptr(unsafe.Pointer(sch)))); rc != 0 {
		err := c.producerError("get_schema", rc) // before release: get_last_error needs the stream
		c.releaseC()
		return err
	}
	var err error
	if c.schema, err = cdevice.ImportSchema(sch); err != nil {
		c.releaseC()
		return err
	}
	return nil
}

func (c *cstream) producerError(call string, rc int32) error {
	var msg string
	if c.getLastError != 0 {
		msg = ffi.GoString(ffi.Call(c.getLastError, uintptr(c.self)))
	}
	return &cdevice.ProducerError{Call: call, Code: int(rc), Message: msg}
}

// next asks the producer for a batch into out; false at the end.
func (c *cstream) next(out unsafe.Pointer, released func() bool) (bool, error) {
	if rc := int32(ffi.Call(c.getNext, uintptr(c.self), uintptr(out))); rc != 0 {
		return false, c.producerError("get_next", rc)
	}
	return !released(), nil
}

// checkEmpty counts consecutive empty batches against WithMaxEmptyBatches.
func (c *cstream) checkEmpty(rows int64) error {
	if rows != 0 {
		c.empties = 0
		return nil
	}
	if c.empties++; c.cfg.maxEmpty > 0 && c.empties >= c.cfg.maxEmpty {
		return fmt.Errorf("%w (%d)", ErrEmptyBatches, c.empties)
	}
	return nil
}

func (c *cstream) retain() { c.refs.Add(1) }

// drop releases a reference; the last calls the producer's release.
func (c *cstream) drop() bool {
	if c.refs.Add(-1) != 0 {
		return false
	}
	c.releaseC()
	return true
}

func (c *cstream) releaseC() {
	ffi.Call(c.release, uintptr(c.self))
	c.leak.Done()
}

// A source is a reader of batches of type T bounded can run: read may
// block in the producer's get_next; free frees the reader once its stream
// is released; discard releases a batch nobody will see.
type source[T any] interface {
	read(context.Context) (T, error)
	free()
	discard(T)
}

// bounded runs src.read so that the caller has ctx's error as soon as ctx
// is done. An abandoned read goes on in the background holding a
// reference to the stream (its structs stay valid, and the producer's
// release waits for it); what it produces is then discarded. A ctx that
// can never be done costs nothing (src is a pointer: no allocation).
func bounded[T any](ctx context.Context, c *cstream, src source[T]) (T, error) {
	if ctx.Done() == nil {
		return src.read(ctx)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	c.retain()
	dropRef := func() {
		if c.drop() {
			src.free()
		}
	}
	go func() {
		v, err := src.read(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		dropRef()
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				src.discard(r.v)
			}
			dropRef()
		}()
		var zero T
		return zero, ctx.Err()
	}
}

// A Reader reads an imported ArrowArrayStream. It implements
// array.RecordReader; a batch from RecordBatch is valid until the next call
// of Next (Retain it to keep it). Not safe for concurrent use.
type Reader struct {
	c    cstream
	own  *abi.ArrayStream // the moved stream, off the Go heap: C writes into
	out  *abi.Array       // these and keeps pointers in them
	cur  arrow.RecordBatch
	err  error
	done bool
	// released: the last reference is gone and the structs are freed;
	// a Next after it is ErrReleased, never a call of the producer.
	released bool
	gc       runtime.Cleanup
}

// An orphan is the C side of a Reader that became unreachable before its
// last Release: arrow-go's cdata readers release their stream when
// collected, and code written for them may rely on it.
type orphan struct {
	release uintptr
	own     *abi.ArrayStream
	out     *abi.Array
	leak    leak.Object
}

func (o orphan) collect() {
	ffi.Call(o.release, uintptr(unsafe.Pointer(o.own)))
	o.leak.Done()
	cdevice.Free(o.own)
	cdevice.Free(o.out)
}

// ImportReader imports an ArrowArrayStream: the schema now (get_schema), the
// batches as Next asks for them. The stream is moved into the Reader and
// released with it.
func ImportReader(s *abi.ArrayStream, opts ...Option) (*Reader, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil ArrowArrayStream", cdevice.ErrInvalid)
	}
	if s.Release == 0 {
		return nil, ErrReleased
	}
	r := &Reader{own: cdevice.New[abi.ArrayStream](), out: cdevice.New[abi.Array]()}
	*r.own = *s
	s.Release = 0 // moved
	o := r.own
	if err := r.c.init(unsafe.Pointer(o), o.GetSchema, o.GetNext, o.GetLastError, o.Release, o.PrivateData,
		arrayStreamRelease.Is(o.Release), opts); err != nil {
		r.free()
		return nil, err
	}
	r.gc = runtime.AddCleanup(r, orphan.collect, orphan{r.c.release, r.own, r.out, r.c.leak})
	return r, nil
}

// Schema is the stream's schema.
func (r *Reader) Schema() *arrow.Schema { return r.c.schema }

// Next advances to the next batch; false at the end or on an error (Err).
func (r *Reader) Next() bool { return r.next(context.Background()) }

// next is Next, giving up with ctx's error when ctx is done first (the
// stream ends there).
func (r *Reader) next(ctx context.Context) bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.released {
		r.err = ErrReleased
		return false
	}
	if r.done {
		return false
	}
	rb, err := bounded[arrow.RecordBatch](ctx, &r.c, r)
	if err == nil && rb != nil {
		if err = r.c.checkEmpty(rb.NumRows()); err != nil {
			rb.Release()
		}
	}
	if err != nil || rb == nil {
		r.err, r.done = err, true
		return false
	}
	r.cur = rb
	return true
}

// read reads a batch (a host stream has no event for a ctx to bound).
func (r *Reader) read(context.Context) (arrow.RecordBatch, error) {
	if e := r.c.direct; e != nil {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.released {
			return nil, ErrReleased
		}
		b, err := e.nextBatch()
		if err != nil {
			return nil, directError(err)
		}
		if b == nil {
			return nil, nil
		}
		rb := b.(arrow.RecordBatch)
		rb.Retain()
		return rb, cdevice.ValidateRecordBatch(rb, r.c.cfg.importOpts...)
	}
	ok, err := r.c.next(unsafe.Pointer(r.out), r.out.Released)
	if !ok {
		return nil, err
	}
	return cdevice.ImportRecordBatchWithSchema(r.out, r.c.schema, r.c.cfg.importOpts...)
}

// RecordBatch is the current batch.
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for array.RecordReader.
func (r *Reader) Record() arrow.RecordBatch { return r.cur }

// Err is the error that ended the stream, or nil at a clean end.
func (r *Reader) Err() error { return r.err }

// Retain adds a reference.
func (r *Reader) Retain() { r.c.retain() }

// Release drops a reference; the last releases the current batch and the C
// stream. Batches retained by the caller stay valid. A Reader that becomes
// unreachable first releases the C stream when the garbage collector finds
// it (call Release: when the collector runs is not known).
func (r *Reader) Release() {
	cur := r.cur
	if r.c.drop() {
		r.cur, r.released = nil, true
		if cur != nil {
			cur.Release()
		}
		r.free()
	}
}

// discard releases a batch read after its caller gave up.
func (r *Reader) discard(rb arrow.RecordBatch) {
	if rb != nil {
		rb.Release()
	}
}

func (r *Reader) free() {
	r.gc.Stop()
	cdevice.Free(r.own)
	cdevice.Free(r.out)
}

// All yields every remaining batch, valid during the loop body (Retain it
// to keep it), then (nil, err) if the stream failed or ctx is done. A done
// ctx ends the stream at once, even while the producer's get_next is
// blocked: that call finishes in the background and its batch is released.
func (r *Reader) All(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			if !r.next(ctx) {
				if r.err != nil {
					yield(nil, r.err)
				}
				return
			}
			if !yield(r.cur, nil) {
				return
			}
		}
	}
}

// A DeviceReader reads an imported ArrowDeviceArrayStream. Not safe for
// concurrent use.
type DeviceReader struct {
	c    cstream
	own  *abi.DeviceArrayStream // off the Go heap, as Reader's
	out  *abi.DeviceArray
	dev  abi.DeviceType // own's, readable after own is freed
	done bool
	err  error
}

// ImportDeviceStream imports an ArrowDeviceArrayStream: the schema now, the
// batches as Next asks for them, each checked to be on the stream's device
// type. The stream is moved into the DeviceReader and released with it.
func ImportDeviceStream(s *abi.DeviceArrayStream, opts ...Option) (*DeviceReader, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil ArrowDeviceArrayStream", cdevice.ErrInvalid)
	}
	if s.Release == 0 {
		return nil, ErrReleased
	}
	r := &DeviceReader{own: cdevice.New[abi.DeviceArrayStream](), out: cdevice.New[abi.DeviceArray]()}
	*r.own = *s
	s.Release = 0 // moved
	o := r.own
	r.dev = o.DeviceType
	if err := r.c.init(unsafe.Pointer(o), o.GetSchema, o.GetNext, o.GetLastError, o.Release, o.PrivateData, false, opts); err != nil {
		r.free()
		return nil, err
	}
	return r, nil
}

// Schema is the stream's schema.
func (r *DeviceReader) Schema() *arrow.Schema { return r.c.schema }

// DeviceType is the stream's device type.
func (r *DeviceReader) DeviceType() abi.DeviceType { return r.dev }

// Next returns the next batch, which the caller releases, or io.EOF at the
// end. When ctx is done first, even while the producer's get_next is
// blocked, it returns ctx's error and the stream ends; the blocked call
// finishes in the background and its batch is released.
func (r *DeviceReader) Next(ctx context.Context) (*cdevice.DeviceRecordBatch, error) {
	if r.done {
		return nil, r.errOrEOF()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := bounded[*cdevice.DeviceRecordBatch](ctx, &r.c, r)
	if err == nil {
		if err = r.c.checkEmpty(b.Length); err != nil {
			b.Release()
		}
	}
	if err != nil {
		r.done, r.err = true, err
		return nil, r.errOrEOF()
	}
	return b, nil
}

func (r *DeviceReader) errOrEOF() error {
	if r.err != nil {
		return r.err
	}
	return io.EOF
}

// read reads a batch; ctx bounds the wait for its sync event.
func (r *DeviceReader) read(ctx context.Context) (*cdevice.DeviceRecordBatch, error) {
	ok, err := r.c.next(unsafe.Pointer(r.out), r.out.Array.Released)
	if !ok {
		if err == nil {
			err = io.EOF
		}
		return nil, err
	}
	if t := r.out.DeviceType; t != r.dev {
		cdevice.ReleaseArray(&r.out.Array)
		return nil, fmt.Errorf("%w: a batch on device type %s in a %s stream", cdevice.ErrInvalid, t, r.dev)
	}
	return cdevice.ImportDeviceRecordBatchOnDeviceWithSchema(ctx, r.out, r.c.schema, r.c.cfg.importOpts...)
}

// All yields every remaining batch, valid during the loop body (Retain it
// to keep it), then (nil, err) if the stream failed or ctx is done.
func (r *DeviceReader) All(ctx context.Context) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for {
			b, err := r.Next(ctx)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			more := yield(b, nil)
			b.Release()
			if !more {
				return
			}
		}
	}
}

// HostRecords yields every remaining batch copied to Go memory, valid
// during the loop body (Retain it to keep it), as All does, then (nil, err)
// if the stream failed or ctx is done.
func (r *DeviceReader) HostRecords(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for b, err := range r.All(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			rb, err := b.ToHost(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			more := yield(rb, nil)
			rb.Release()
			if !more {
				return
			}
		}
	}
}

// Retain adds a reference.
func (r *DeviceReader) Retain() { r.c.retain() }

// Release drops a reference; the last releases the C stream. Batches handed
// out stay valid until released; a Next after it is ErrReleased.
func (r *DeviceReader) Release() {
	if r.c.drop() {
		r.done, r.err = true, ErrReleased
		r.free()
	}
}

// discard releases a batch read after its caller gave up.
func (r *DeviceReader) discard(b *cdevice.DeviceRecordBatch) { b.Release() }

func (r *DeviceReader) free() {
	cdevice.Free(r.own)
	cdevice.Free(r.out)
}
