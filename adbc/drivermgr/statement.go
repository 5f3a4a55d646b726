package drivermgr

import (
	"context"
	"errors"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/stream"
)

// A Statement is an AdbcStatement of a Connection, serialized with it.
type Statement struct {
	c      *Connection
	h      uintptr // struct AdbcStatement, C memory
	opts   options
	closed bool // under c.mu
}

var (
	_ adbc.Statement              = (*Statement)(nil)
	_ adbc.GetSetOptions          = (*Statement)(nil)
	_ adbc.StatementExecuteSchema = (*Statement)(nil)
)

// newStatement makes a statement of c; c.mu is held.
func newStatement(c *Connection) (*Statement, error) {
	p, err := ffi.Calloc(unsafe.Sizeof(cabi.Handle{}))
	if err != nil {
		return nil, err
	}
	s := &Statement{c: c, h: uintptr(p)}
	if err := c.drv.call("AdbcStatementNew", c.drv.fns.StatementNew, c.h, s.h); err != nil {
		ffi.Free(p)
		return nil, err
	}
	s.opts = options{d: c.drv, o: c.drv.stmtOptions(), h: s.h, mu: &c.mu}
	return s, nil
}

// lock takes the connection for one call of the statement.
func (s *Statement) lock() error {
	if err := s.c.lock(); err != nil {
		return err
	}
	if s.closed {
		s.c.mu.Unlock()
		return adbc.Error{Code: adbc.StatusInvalidState, Msg: "statement closed"}
	}
	return nil
}

func (s *Statement) do(what string, fn uintptr, args ...uintptr) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.c.mu.Unlock()
	return s.c.drv.call(what, fn, append([]uintptr{s.h}, args...)...)
}

func (s *Statement) d() *cabi.Driver { return s.c.drv.fns }

// Close releases the statement. A second Close does nothing.
func (s *Statement) Close() error {
	if err := s.lock(); err != nil {
		return nil // closed already, or its connection is
	}
	defer s.c.mu.Unlock()
	s.closed = true
	err := s.c.drv.call("AdbcStatementRelease", s.d().StatementRelease, s.h)
	ffi.Free(abi.Pointer(s.h))
	return err
}

func (s *Statement) SetSqlQuery(query string) error {
	var m cmem
	defer m.free()
	return s.do("AdbcStatementSetSqlQuery", s.d().StatementSetSqlQuery, m.str(query))
}

func (s *Statement) SetSubstraitPlan(plan []byte) error {
	var m cmem
	defer m.free()
	return s.do("AdbcStatementSetSubstraitPlan", s.d().StatementSetSubstraitPlan, m.bytes(plan), uintptr(len(plan)))
}

func (s *Statement) Prepare(context.Context) error {
	return s.do("AdbcStatementPrepare", s.d().StatementPrepare)
}

// ExecuteQuery runs the statement and returns its result as a reader that
// streams the driver's batches as they come (zero-copy: the driver's
// memory, released when the reader and the batches are). When ctx is done
// before the reader is released, the statement is cancelled (a 1.1
// driver's StatementCancel). The row count is -1 where the driver does not
// know it.
func (s *Statement) ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error) {
	var m cmem
	defer m.free()
	rows := m.alloc(8)
	*(*int64)(abi.Pointer(rows)) = -1
	out := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(out)
	stop := s.watch(ctx)
	if err := s.do("AdbcStatementExecuteQuery", s.d().StatementExecuteQuery, uintptr(unsafe.Pointer(out)), rows); err != nil {
		stop()
		return nil, -1, err
	}
	r, err := newReader(ctx, s.c, out, stop)
	if err != nil {
		return nil, -1, err
	}
	return r, *(*int64)(abi.Pointer(rows)), nil
}

// ExecuteUpdate runs the statement for its effect and returns the rows it
// affected (-1 where the driver does not know).
func (s *Statement) ExecuteUpdate(ctx context.Context) (int64, error) {
	var m cmem
	defer m.free()
	rows := m.alloc(8)
	*(*int64)(abi.Pointer(rows)) = -1
	stop := s.watch(ctx)
	defer stop()
	if err := s.do("AdbcStatementExecuteQuery", s.d().StatementExecuteQuery, 0, rows); err != nil {
		return -1, err
	}
	return *(*int64)(abi.Pointer(rows)), nil
}

// ExecuteSchema returns the schema the statement's result would have.
func (s *Statement) ExecuteSchema(context.Context) (*arrow.Schema, error) {
	sc := cdevice.New[abi.Schema]()
	defer cdevice.Free(sc)
	if err := s.do("AdbcStatementExecuteSchema", s.d().StatementExecuteSchema, uintptr(unsafe.Pointer(sc))); err != nil {
		return nil, err
	}
	return importSchema(sc)
}

func (s *Statement) GetParameterSchema() (*arrow.Schema, error) {
	sc := cdevice.New[abi.Schema]()
	defer cdevice.Free(sc)
	if err := s.do("AdbcStatementGetParameterSchema", s.d().StatementGetParameterSchema, uintptr(unsafe.Pointer(sc))); err != nil {
		return nil, err
	}
	return importSchema(sc)
}

// Bind binds one batch of parameters; the driver takes it over (a copy of
// its Go memory is not made: the export keeps it alive until the driver
// releases it).
func (s *Statement) Bind(_ context.Context, values arrow.RecordBatch) error {
	arr, sc := cdevice.New[abi.Array](), cdevice.New[abi.Schema]()
	defer cdevice.Free(arr)
	defer cdevice.Free(sc)
	if err := cdevice.ExportRecordBatch(values, arr, sc); err != nil {
		return adbc.Error{Code: adbc.StatusInvalidArgument, Msg: "Bind: " + err.Error()}
	}
	err := s.do("AdbcStatementBind", s.d().StatementBind, uintptr(unsafe.Pointer(arr)), uintptr(unsafe.Pointer(sc)))
	releaseLeft(arr, sc) // what the driver did not take
	return err
}

// BindStream binds a stream of parameter batches; the driver reads it
// through the C stream interface and releases it.
func (s *Statement) BindStream(_ context.Context, rdr array.RecordReader) error {
	st := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(st)
	if err := stream.ExportReader(rdr, st); err != nil {
		return adbc.Error{Code: adbc.StatusInvalidArgument, Msg: "BindStream: " + err.Error()}
	}
	err := s.do("AdbcStatementBindStream", s.d().StatementBindStream, uintptr(unsafe.Pointer(st)))
	if st.Release != 0 {
		ffi.Call1(st.Release, uintptr(unsafe.Pointer(st)))
	}
	return err
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
func (s *Statement) ExecutePartitions(context.Context) (*arrow.Schema, adbc.Partitions, int64, error) {
	var m cmem
	defer m.free()
	rows := m.alloc(8)
	*(*int64)(abi.Pointer(rows)) = -1
	parts := m.alloc(unsafe.Sizeof(cabi.Partitions{}))
	sc := cdevice.New[abi.Schema]()
	defer cdevice.Free(sc)
	if err := s.do("AdbcStatementExecutePartitions", s.d().StatementExecutePartitions,
		uintptr(unsafe.Pointer(sc)), parts, rows); err != nil {
		return nil, adbc.Partitions{}, -1, err
	}
	p := (*cabi.Partitions)(abi.Pointer(parts))
	out, perr := copyPartitions(p)
	if p.Release != 0 {
		ffi.Call1(p.Release, parts)
	}
	var schema *arrow.Schema
	var serr error
	if sc.Release != 0 { // imported (and released) whatever else failed
		schema, serr = importSchema(sc)
	}
	if err := errors.Join(perr, serr); err != nil {
		return nil, adbc.Partitions{}, -1, err
	}
	return schema, out, *(*int64)(abi.Pointer(rows)), nil
}

// Bounds on what a driver's partitions may claim.
const (
	maxPartitions     = 1 << 20
	maxPartitionBytes = 1 << 26
)

func copyPartitions(p *cabi.Partitions) (adbc.Partitions, error) {
	n := p.NumPartitions
	if n > maxPartitions || n > 0 && (p.Partitions == 0 || p.PartitionLengths == 0) {
		return adbc.Partitions{}, adbc.Error{Code: adbc.StatusInvalidData, Msg: "the driver's partitions are malformed"}
	}
	out := adbc.Partitions{NumPartitions: uint64(n)}
	if n == 0 {
		return out, nil
	}
	ptrs := unsafe.Slice((*uintptr)(abi.Pointer(p.Partitions)), n)
	lens := unsafe.Slice((*uintptr)(abi.Pointer(p.PartitionLengths)), n)
	for i := range ptrs {
		if lens[i] > maxPartitionBytes || ptrs[i] == 0 && lens[i] != 0 {
			return adbc.Partitions{}, adbc.Error{Code: adbc.StatusInvalidData, Msg: "the driver's partitions are malformed"}
		}
		out.PartitionIDs = append(out.PartitionIDs, append([]byte(nil), unsafe.Slice((*byte)(abi.Pointer(ptrs[i])), lens[i])...))
	}
	return out, nil
}

// Cancel asks the driver to stop the statement's work; it does not wait
// for the connection's lock, as the call it cancels holds it.
func (s *Statement) Cancel() error {
	return s.c.drv.call("AdbcStatementCancel", s.d().StatementCancel, s.h)
}

// watch cancels the statement when ctx is done, until stop is called.
func (s *Statement) watch(ctx context.Context) (stop func()) {
	if ctx.Done() == nil || s.d().StatementCancel == 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-ctx.Done():
			s.Cancel()
		case <-done:
		}
	}()
	return func() {
		select {
		case <-done:
		default:
			close(done)
			<-finished
		}
	}
}

func (s *Statement) SetOption(key, value string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.opts.SetOption(key, value)
}

func (s *Statement) SetOptionBytes(key string, value []byte) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.opts.SetOptionBytes(key, value)
}

func (s *Statement) SetOptionInt(key string, value int64) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.opts.SetOptionInt(key, value)
}

func (s *Statement) SetOptionDouble(key string, value float64) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.opts.SetOptionDouble(key, value)
}

func (s *Statement) GetOption(key string) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	return s.opts.GetOption(key)
}

func (s *Statement) GetOptionBytes(key string) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.opts.GetOptionBytes(key)
}

func (s *Statement) GetOptionInt(key string) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.opts.GetOptionInt(key)
}

func (s *Statement) GetOptionDouble(key string) (float64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.opts.GetOptionDouble(key)
}

func (s *Statement) check() error {
	if err := s.lock(); err != nil {
		return err
	}
	s.c.mu.Unlock()
	return nil
}
