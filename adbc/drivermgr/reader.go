package drivermgr

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/stream"
)

// A reader is a driver's result stream as an array.RecordReader: batches
// arrive one at a time (zero-copy, the driver's memory until released),
// its calls serialized with its connection's, and a failure is the
// driver's adbc.Error with its details where the driver gives them
// (ErrorFromArrayStream).
type reader struct {
	c    *connection
	ctx  context.Context // ExecuteQuery's (a metadata call's: Background)
	r    *stream.Reader
	refs atomic.Int64
	w    atomic.Pointer[watcher] // the statement's cancellation watch, or nil
	// snap is the stream struct as the driver made it (the import moved
	// the original): ErrorFromArrayStream reads its private_data. It is
	// never released: it only names the stream.
	snap     abi.ArrayStream
	err      error
	more     bool // the last Next read a batch
	released bool // the stream is released (under c.mu)
}

// newReader imports the stream the driver wrote into s; the connection is
// held. stop (may be nil) is called when the reader is released.
func newReader(ctx context.Context, c *connection, s *abi.ArrayStream, w *watcher) (*reader, error) {
	rd := &reader{c: c, ctx: ctx, snap: *s}
	rd.w.Store(w)
	r, err := stream.ImportReader(s)
	if err != nil {
		// The import released the stream: the driver can say no more of it.
		rd.free()
		return nil, err
	}
	rd.r = r
	rd.refs.Store(1)
	c.readers[rd] = struct{}{}
	return rd, nil
}

func (rd *reader) Retain() { rd.refs.Add(1) }

// Release releases the stream with the last reference (the driver's
// release, holding the connection) and ends the cancellation watch.
func (rd *reader) Release() {
	if rd.refs.Add(-1) != 0 || rd.c.abandoned() && rd.c.afterAbandoned(rd.releaseLast) {
		return
	}
	rd.releaseLast()
}

func (rd *reader) releaseLast() {
	rd.c.mu.Lock()
	rd.orphaned()
	rd.c.mu.Unlock()
}

// orphaned releases the stream of a reader nobody holds (the last Release,
// or a result its abandoned call made after its caller left); c.mu is
// held.
func (rd *reader) orphaned() {
	rd.releaseStream()
	delete(rd.c.readers, rd)
	rd.free()
}

// releaseStream releases the driver's stream, once (the reader's last
// Release, or its connection's Close before it); c.mu is held.
func (rd *reader) releaseStream() {
	if !rd.released {
		rd.released = true
		rd.r.Release()
	}
}

func (rd *reader) free() {
	rd.w.Swap(nil).stop()
}

func (rd *reader) Schema() *arrow.Schema { return rd.r.Schema() }

// Next reads the next batch. Once the context of the ExecuteQuery that
// made the reader has ended, Next returns false and Err the context's
// error (adbcerr.Ended), without asking the driver for another batch; a
// batch the driver is computing as it ends is waited for as ExecuteQuery
// waits (withDeadline) and not returned.
func (rd *reader) Next() bool {
	if rd.err != nil {
		return false
	}
	if err := rd.c.withDeadline(rd.ctx, "ArrowArrayStream.get_next", &rd.w, (*nextCall)(rd)); err != nil {
		rd.err = err
		return false
	}
	return rd.more
}

// A nextCall is a reader's get_next as a longCall.
type nextCall reader

func (n *nextCall) run(*cmem) error {
	rd := (*reader)(n)
	if rd.released {
		return adbcerr.New(adbc.StatusInvalidState, "the result's connection is closed")
	}
	if rd.more = rd.r.Next(); !rd.more && rd.r.Err() != nil {
		return rd.adbcErr(rd.r.Err())
	}
	return nil
}

// orphan: a batch read for a caller that will not see it is the stream's
// current one, released with the reader.
func (n *nextCall) orphan() {}

func (n *nextCall) effect() bool { return false }

func (rd *reader) RecordBatch() arrow.RecordBatch { return rd.r.RecordBatch() }

// Record is RecordBatch, by array.RecordReader's older name.
func (rd *reader) Record() arrow.RecordBatch { return rd.r.RecordBatch() }

func (rd *reader) Err() error { return rd.err }

// adbcErr is a stream failure as the driver's adbc.Error, where it gives
// one for the stream, joined with err (the ProducerError or import error);
// the connection is held.
func (rd *reader) adbcErr(err error) error {
	d := rd.c.drv
	if d.fns == nil || d.fns.ErrorFromArrayStream == 0 || rd.snap.PrivateData == 0 {
		return err
	}
	var m cmem // an error path: its own memory, the call's scratch is in use
	defer m.free()
	st := m.alloc(4)
	var pin runtime.Pinner // snap is Go memory: pinned for the call
	pin.Pin(&rd.snap)
	e := ffi.Call(d.fns.ErrorFromArrayStream, uintptr(unsafe.Pointer(&rd.snap)), st)
	pin.Unpin()
	if e == 0 {
		return err
	}
	code := adbc.Status(*(*uint8)(abi.Pointer(st)))
	if code == adbc.StatusOK { // the driver says the stream has no error
		return err
	}
	ce := (*cabi.Error)(abi.Pointer(e))
	out := adbc.Error{Code: code, Msg: d.secrets.String(ffi.GoString(ce.Message)), SqlState: ce.SQLState}
	if ce.VendorCode != cabi.ErrorVendorCodePrivateData {
		out.VendorCode = ce.VendorCode
	}
	out.Details = d.details(ce) // the stream owns ce: not released here
	return errors.Join(adbcerr.Wrap(out), err)
}
