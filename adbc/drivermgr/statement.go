package drivermgr

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/stream"
)

// A Statement is an AdbcStatement of a Connection, serialized with it.
type statement struct {
	c *connection
	// watching is the watch of the statement's last call that has one
	// (ExecuteQuery, ExecuteUpdate), for withDeadline's grace.
	watching atomic.Pointer[watcher]
	h        uintptr // struct AdbcStatement, C memory
	options          // the option calls, with s.with
	closed   bool    // written under c.mu and c.life
}

var (
	_ adbc.Statement              = (*statement)(nil)
	_ adbc.GetSetOptions          = (*statement)(nil)
	_ adbc.PostInitOptions        = (*statement)(nil)
	_ adbc.StatementExecuteSchema = (*statement)(nil)
	_ Canceller                   = (*statement)(nil)
)

// newStatement makes a statement of c, which is held.
func newStatement(c *connection, m *cmem) (*statement, error) {
	p, err := ffi.Calloc(unsafe.Sizeof(cabi.Handle{}))
	if err != nil {
		return nil, err
	}
	s := &statement{c: c, h: uintptr(p)}
	if err := c.drv.callIn(m, "AdbcStatementNew", c.drv.fns.StatementNew, c.h, s.h); err != nil {
		ffi.Free(p)
		return nil, err
	}
	s.options = options{d: c.drv, o: c.drv.stmtOptions(), h: s.h, in: s}
	return s, nil
}

// with runs f holding the statement's connection, with its scratch memory.
// (Not through withDeadline: its f may run on another goroutine, so the
// closure would be allocated on every call.)
func (s *statement) with(f func(m *cmem) error) error {
	return s.c.with(func(m *cmem) error {
		if err := s.live(); err != nil {
			return err
		}
		return f(m)
	})
}

// within is with for a call that takes a context: bounded by it as a
// query is (withDeadline, without the statement's cancel: only executions
// ask for it). What an abandoned call makes here is Go memory, or released
// inside the call: nothing is left to release after it.
func (s *statement) within(ctx context.Context, what string, f func(m *cmem) error) error {
	return s.c.withDeadline(ctx, what, nil, funcCall{do: func(m *cmem) error {
		if err := s.live(); err != nil {
			return err
		}
		return f(m)
	}})
}

// live is nil, or the error of a statement used after Close; the
// connection is held.
func (s *statement) live() error {
	if s.closed {
		return adbcerr.New(adbc.StatusInvalidState, "statement closed")
	}
	return nil
}

func (s *statement) d() *cabi.Driver { return s.c.drv.fns }

// Close releases the statement. A second Close does nothing, and so does a
// Close after its connection's (which released it).
func (s *statement) Close() error {
	c := s.c
	if c.abandoned() && c.afterAbandoned(func() { s.Close() }) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.closed {
		return nil
	}
	c.life.Lock()
	defer c.life.Unlock()
	delete(c.stmts, s)
	return s.release()
}

// release releases the statement; c.mu and c.life are held for writing.
func (s *statement) release() error {
	s.closed = true
	defer ffi.Free(abi.Pointer(s.h))
	defer s.c.scratch.free()
	return s.c.drv.callIn(s.c.scratch, "AdbcStatementRelease", s.d().StatementRelease, s.h)
}

func (s *statement) SetSqlQuery(query string) error {
	return s.with(func(m *cmem) error {
		return s.c.drv.callIn(m, "AdbcStatementSetSqlQuery", s.d().StatementSetSqlQuery, s.h, m.str(query))
	})
}

func (s *statement) SetSubstraitPlan(plan []byte) error {
	return s.with(func(m *cmem) error {
		return s.c.drv.callIn(m, "AdbcStatementSetSubstraitPlan", s.d().StatementSetSubstraitPlan, s.h, m.bytes(plan), uintptr(len(plan)))
	})
}

func (s *statement) Prepare(ctx context.Context) error {
	return s.within(ctx, "AdbcStatementPrepare", func(m *cmem) error {
		return s.c.drv.callIn(m, "AdbcStatementPrepare", s.d().StatementPrepare, s.h)
	})
}

// An execution is one ExecuteQuery or ExecuteUpdate, a longCall: what it
// asks for and what it got.
type execution struct {
	s     *statement
	ctx   context.Context
	query bool    // ExecuteQuery: a result stream
	rd    *reader // the result stream (ExecuteQuery)
	n     int64   // rows, -1 where the driver does not know
}

// execute runs the statement, abandoned as withDeadline says.
func (s *statement) execute(ctx context.Context, query bool) (*execution, error) {
	e := &execution{s: s, ctx: ctx, query: query, n: -1}
	return e, s.c.withDeadline(ctx, "AdbcStatementExecuteQuery", &s.watching, e)
}

func (e *execution) run(m *cmem) error {
	s := e.s
	if err := s.live(); err != nil {
		return err
	}
	w := s.watch(e.ctx)
	var out uintptr // NULL: ExecuteUpdate
	if e.query {
		out = m.alloc(unsafe.Sizeof(abi.ArrayStream{}))
	}
	rows := m.alloc(8)
	*(*int64)(abi.Pointer(rows)) = -1
	err := s.c.drv.callIn(m, "AdbcStatementExecuteQuery", s.d().StatementExecuteQuery, s.h, out, rows)
	if err == nil {
		e.n = *(*int64)(abi.Pointer(rows))
		if e.query {
			// The reader ends the watch when it is released.
			if e.rd, err = newReader(e.ctx, s.c, (*abi.ArrayStream)(abi.Pointer(out)), w); err == nil {
				return nil
			}
		}
	}
	w.stop()
	return err
}

// orphan releases the result of an execution its caller will not read.
func (e *execution) orphan() {
	if e.rd != nil {
		e.rd.orphaned()
		e.rd = nil
	}
}

// effect: an ExecuteUpdate's success is rows changed.
func (e *execution) effect() bool { return !e.query }

// ExecuteQuery runs the statement and returns its result as a reader that
// streams the driver's batches as they come (zero-copy: the driver's
// memory, released when the reader and the batches are). When ctx is done
// before the reader is released, the statement is cancelled (a 1.1
// driver's StatementCancel). The row count is -1 where the driver does not
// know it.
func (s *statement) ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error) {
	e, err := s.execute(ctx, true)
	if err != nil {
		return nil, -1, err
	}
	return e.rd, e.n, nil
}

// ExecuteUpdate runs the statement for its effect and returns the rows it
// affected (-1 where the driver does not know).
func (s *statement) ExecuteUpdate(ctx context.Context) (int64, error) {
	e, err := s.execute(ctx, false)
	if err != nil {
		return -1, err
	}
	return e.n, nil
}

// schemaCall makes a call that fills an ArrowSchema and imports it.
func (s *statement) schemaCall(ctx context.Context, what string, fn fnOf) (sc *arrow.Schema, err error) {
	err = s.within(ctx, what, func(m *cmem) error {
		out := m.alloc(unsafe.Sizeof(abi.Schema{}))
		if err := s.c.drv.callIn(m, what, fn(s.d()), s.h, out); err != nil {
			return err
		}
		sc, err = importSchema((*abi.Schema)(abi.Pointer(out)))
		return err
	})
	if err != nil { // after an abandonment the call may still write sc
		return nil, err
	}
	return sc, nil
}

// ExecuteSchema returns the schema the statement's result would have.
func (s *statement) ExecuteSchema(ctx context.Context) (*arrow.Schema, error) {
	return s.schemaCall(ctx, "AdbcStatementExecuteSchema", func(f *cabi.Driver) uintptr { return f.StatementExecuteSchema })
}

func (s *statement) GetParameterSchema() (*arrow.Schema, error) {
	return s.schemaCall(context.Background(), "AdbcStatementGetParameterSchema", func(f *cabi.Driver) uintptr { return f.StatementGetParameterSchema })
}

// Bind binds one batch of parameters, exported without a copy; the driver
// takes the export over and releases it when it is done.
func (s *statement) Bind(ctx context.Context, values arrow.RecordBatch) error {
	if ctx.Err() != nil {
		return adbcerr.Ended(ctx, "AdbcStatementBind", nil)
	}
	if err := checkBound(values); err != nil {
		return err
	}
	return s.with(func(m *cmem) error {
		arr := (*abi.Array)(abi.Pointer(m.alloc(unsafe.Sizeof(abi.Array{}))))
		sc := (*abi.Schema)(abi.Pointer(m.alloc(unsafe.Sizeof(abi.Schema{}))))
		if err := cdevice.ExportRecordBatch(values, arr, sc); err != nil {
			return adbcerr.New(adbc.StatusInvalidArgument, "Bind: "+err.Error())
		}
		err := s.c.drv.callIn(m, "AdbcStatementBind", s.d().StatementBind, s.h,
			uintptr(unsafe.Pointer(arr)), uintptr(unsafe.Pointer(sc)))
		releaseLeft(arr, sc) // what the driver did not take
		return err
	})
}

// BindStream binds a stream of parameter batches; the driver reads it
// through the C stream interface and releases it.
func (s *statement) BindStream(ctx context.Context, rdr array.RecordReader) error {
	if ctx.Err() != nil {
		return adbcerr.Ended(ctx, "AdbcStatementBindStream", nil)
	}
	if rdr == nil {
		return adbcerr.New(adbc.StatusInvalidArgument, "BindStream: nil reader")
	}
	return s.with(func(m *cmem) error {
		st := (*abi.ArrayStream)(abi.Pointer(m.alloc(unsafe.Sizeof(abi.ArrayStream{}))))
		if err := stream.ExportReader(&checkedReader{RecordReader: rdr}, st); err != nil {
			return adbcerr.New(adbc.StatusInvalidArgument, "BindStream: "+err.Error())
		}
		err := s.c.drv.callIn(m, "AdbcStatementBindStream", s.d().StatementBindStream, s.h, uintptr(unsafe.Pointer(st)))
		if st.Release != 0 { // the driver did not take it
			ffi.Call1(st.Release, uintptr(unsafe.Pointer(st)))
		}
		return err
	})
}

// releaseLeft releases the structs a driver's call left in place (it moves
// what it keeps out of them).
func releaseLeft(arr *abi.Array, sc *abi.Schema) {
	if arr.Release != 0 {
		ffi.Call1(arr.Release, uintptr(unsafe.Pointer(arr)))
	}
	if sc.Release != 0 {
		ffi.Call1(sc.Release, uintptr(unsafe.Pointer(sc)))
	}
}

// ExecutePartitions runs the statement as partitions, each read with
// Connection.ReadPartition.
func (s *statement) ExecutePartitions(ctx context.Context) (schema *arrow.Schema, out adbc.Partitions, n int64, err error) {
	err = s.within(ctx, "AdbcStatementExecutePartitions", func(m *cmem) error {
		sc := (*abi.Schema)(abi.Pointer(m.alloc(unsafe.Sizeof(abi.Schema{}))))
		parts, rows := m.alloc(unsafe.Sizeof(cabi.Partitions{})), m.alloc(8)
		*(*int64)(abi.Pointer(rows)) = -1
		if err := s.c.drv.callIn(m, "AdbcStatementExecutePartitions", s.d().StatementExecutePartitions,
			s.h, uintptr(unsafe.Pointer(sc)), parts, rows); err != nil {
			return err
		}
		n = *(*int64)(abi.Pointer(rows))
		p := (*cabi.Partitions)(abi.Pointer(parts))
		var perr, serr error
		out, perr = copyPartitions(p)
		if p.Release != 0 {
			ffi.Call1(p.Release, parts)
		}
		if sc.Release != 0 { // imported (and released) whatever else failed
			schema, serr = importSchema(sc)
		}
		return errors.Join(perr, serr)
	})
	if err != nil {
		return nil, adbc.Partitions{}, -1, err
	}
	return schema, out, n, nil
}

// Bounds on what a driver's partitions may claim.
const (
	maxPartitions     = 1 << 20
	maxPartitionBytes = 1 << 26
)

func copyPartitions(p *cabi.Partitions) (adbc.Partitions, error) {
	n := p.NumPartitions
	if n > maxPartitions || n > 0 && (p.Partitions == 0 || p.PartitionLengths == 0) {
		return adbc.Partitions{}, adbcerr.New(adbc.StatusInvalidData, "the driver's partitions are malformed")
	}
	out := adbc.Partitions{NumPartitions: uint64(n)}
	if n == 0 {
		return out, nil
	}
	ptrs := unsafe.Slice((*uintptr)(abi.Pointer(p.Partitions)), n)
	lens := unsafe.Slice((*uintptr)(abi.Pointer(p.PartitionLengths)), n)
	for i := range ptrs {
		if lens[i] > maxPartitionBytes || ptrs[i] == 0 && lens[i] != 0 {
			return adbc.Partitions{}, adbcerr.New(adbc.StatusInvalidData, "the driver's partitions are malformed")
		}
		out.PartitionIDs = append(out.PartitionIDs, append([]byte(nil), unsafe.Slice((*byte)(abi.Pointer(ptrs[i])), lens[i])...))
	}
	return out, nil
}

// Cancel asks the driver to stop the statement's work; it does not wait
// for the connection's lock, as the call it cancels holds it.
func (s *statement) Cancel() error {
	s.c.life.RLock()
	defer s.c.life.RUnlock()
	if s.closed || s.c.closed {
		return adbcerr.New(adbc.StatusInvalidState, "statement closed")
	}
	return s.c.drv.call("AdbcStatementCancel", s.d().StatementCancel, s.h)
}

// A watcher cancels a statement once a context ends, until stopped
// (watch). It tells a call that the context has ended how long to wait for
// the driver (grace).
type watcher struct {
	done     chan struct{} // closed by stop
	finished chan struct{} // closed when the watch is over, its Cancel returned
	accepted atomic.Bool   // the driver took the cancel
}

// watch cancels the statement when ctx is done, until stop is called, and
// is the statement's watching; nil where there is nothing to watch (no ctx
// that ends, no StatementCancel).
func (s *statement) watch(ctx context.Context) *watcher {
	if ctx.Done() == nil || s.d().StatementCancel == 0 {
		return nil
	}
	w := &watcher{done: make(chan struct{}), finished: make(chan struct{})}
	s.watching.Store(w)
	go func() {
		defer close(w.finished)
		select {
		case <-ctx.Done():
			w.accepted.Store(s.Cancel() == nil)
		case <-w.done:
		}
	}()
	return w
}

// stop ends the watch (nil: nothing to end).
func (w *watcher) stop() {
	if w == nil {
		return
	}
	select {
	case <-w.done:
	default:
		close(w.done)
		<-w.finished
	}
}

// grace is how long a call whose context has ended waits for the driver
// before it is abandoned: cancelGrace where the driver took the cancel
// (it stops the call itself, in its own time: a server's round trip),
// abandonGrace otherwise. It waits, within abandonGrace, for the watch's
// Cancel to return.
func (w *watcher) grace() time.Duration {
	if w == nil {
		return abandonGrace
	}
	t := time.NewTimer(abandonGrace)
	defer t.Stop()
	select {
	case <-w.finished:
		if w.accepted.Load() {
			return cancelGrace
		}
	case <-t.C:
	}
	return abandonGrace
}
