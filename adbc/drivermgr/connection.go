package drivermgr

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// A Connection is an AdbcConnection. Its calls, its statements' and its
// result readers' are serialized (an ADBC connection is not safe for
// concurrent use); it is safe for concurrent use.
type connection struct {
	mu      sync.Mutex
	amu     sync.Mutex  // guards ab, without mu (an abandoned call holds mu)
	ab      abandonment // a call abandoned when its context ended (deadline.go)
	drv     *driver
	db      *Database
	h       uintptr // struct AdbcConnection, C memory
	scratch *cmem   // C memory for one call at a time
	options         // the option calls, with c.with
	// life guards the handles against Cancel, which runs without mu (the
	// call it cancels holds mu): releases take it for writing. closed is
	// written under mu and life both.
	life   sync.RWMutex
	closed bool
	// What is still open, released by Close first (a driver's statements
	// and streams must go before their connection).
	stmts   map[*statement]struct{}
	readers map[*reader]struct{}
}

var (
	_ adbc.Connection              = (*connection)(nil)
	_ adbc.GetSetOptions           = (*connection)(nil)
	_ adbc.PostInitOptions         = (*connection)(nil)
	_ adbc.ConnectionGetStatistics = (*connection)(nil)
	_ Canceller                    = (*connection)(nil)
)

// Canceller is what the connections and statements of drivermgr are
// beside arrow-adbc's interfaces: Cancel asks the driver to stop the call
// in flight (AdbcConnectionCancel, AdbcStatementCancel, ADBC 1.1), from
// any goroutine, without waiting for it.
type Canceller interface {
	Cancel() error
}

// newConnection makes a connection of db, sets opts on it (in key order)
// and initializes it; db.use is held (shared).
func newConnection(db *Database, opts map[string]string) (*connection, error) {
	d := db.drv
	scratch, err := newArena()
	if err != nil {
		return nil, err
	}
	c := &connection{drv: d, db: db, scratch: scratch,
		stmts: map[*statement]struct{}{}, readers: map[*reader]struct{}{}}
	p, err := ffi.Calloc(unsafe.Sizeof(cabi.Handle{}))
	if err != nil {
		scratch.destroy()
		return nil, err
	}
	c.h = uintptr(p)
	if err := d.callIn(scratch, "AdbcConnectionNew", d.fns.ConnectionNew, c.h); err != nil {
		scratch.destroy()
		ffi.Free(p)
		return nil, err
	}
	scratch.free()
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		err = d.callIn(scratch, "AdbcConnectionSetOption", d.fns.ConnectionSetOption, c.h, scratch.str(k), scratch.str(opts[k]))
		scratch.free()
		if err != nil {
			break
		}
	}
	if err == nil {
		err = d.callIn(scratch, "AdbcConnectionInit", d.fns.ConnectionInit, c.h, db.h)
	}
	if err != nil {
		scratch.free()
		d.callIn(scratch, "AdbcConnectionRelease", d.fns.ConnectionRelease, c.h)
		scratch.destroy()
		ffi.Free(p)
		return nil, err
	}
	scratch.free()
	c.options = options{d: d, o: d.connOptions(), h: c.h, in: c}
	d.ref()
	return c, nil
}

// lock takes the connection, or says why it cannot be used.
func (c *connection) lock() error {
	if c.abandoned() {
		return ErrAbandoned
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return adbcerr.New(adbc.StatusInvalidState, "connection closed")
	}
	return nil
}

// with runs f holding the connection, with its scratch memory (cleared
// after).
func (c *connection) with(f func(m *cmem) error) error {
	if err := c.lock(); err != nil {
		return err
	}
	defer c.mu.Unlock()
	defer c.scratch.free()
	return f(c.scratch)
}

// fnOf picks one of the driver's functions. Calls take it only once they
// hold their connection open: the table is gone once the database is
// closed.
type fnOf func(*cabi.Driver) uintptr

// reader runs a call of the connection that fills an ArrowArrayStream
// (args are the call's arguments before it), bounded by ctx as a query is
// (withDeadline), and returns the stream as a reader whose calls are
// serialized with the connection's, its batches bounded by ctx too.
func (c *connection) reader(ctx context.Context, what string, fn fnOf, args func(m *cmem) []uintptr) (array.RecordReader, error) {
	var rd *reader
	err := c.withDeadline(ctx, what, nil, funcCall{do: func(m *cmem) error {
		s := m.alloc(unsafe.Sizeof(abi.ArrayStream{}))
		if err := c.drv.callIn(m, what, fn(c.drv.fns), append(append([]uintptr{c.h}, args(m)...), s)...); err != nil {
			return err
		}
		var err error
		rd, err = newReader(ctx, c, (*abi.ArrayStream)(abi.Pointer(s)), nil)
		return err
	}, left: func() { // what it made is nobody's
		if rd != nil {
			rd.orphaned()
		}
	}})
	if err != nil {
		return nil, err
	}
	return rd, nil
}

func none(*cmem) []uintptr { return nil }

func (c *connection) GetInfo(ctx context.Context, codes []adbc.InfoCode) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetInfo", func(f *cabi.Driver) uintptr { return f.ConnectionGetInfo }, func(m *cmem) []uintptr {
		var p uintptr
		if len(codes) > 0 {
			p = m.alloc(uintptr(4 * len(codes)))
			dst := unsafe.Slice((*uint32)(abi.Pointer(p)), len(codes))
			for i, code := range codes {
				dst[i] = uint32(code)
			}
		}
		return []uintptr{p, uintptr(len(codes))}
	})
}

func (c *connection) GetObjects(ctx context.Context, depth adbc.ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetObjects", func(f *cabi.Driver) uintptr { return f.ConnectionGetObjects }, func(m *cmem) []uintptr {
		var types uintptr
		if tableType != nil { // a NULL-terminated list
			types = m.alloc(uintptr(len(tableType)+1) * unsafe.Sizeof(uintptr(0)))
			list := unsafe.Slice((*uintptr)(abi.Pointer(types)), len(tableType)+1)
			for i, t := range tableType {
				list[i] = m.str(t)
			}
		}
		return []uintptr{uintptr(depth), m.optStr(catalog), m.optStr(dbSchema), m.optStr(tableName), types, m.optStr(columnName)}
	})
}

func (c *connection) GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (sc *arrow.Schema, err error) {
	err = c.withDeadline(ctx, "AdbcConnectionGetTableSchema", nil, funcCall{do: func(m *cmem) error {
		out := m.alloc(unsafe.Sizeof(abi.Schema{}))
		if err := c.drv.callIn(m, "AdbcConnectionGetTableSchema", c.drv.fns.ConnectionGetTableSchema,
			c.h, m.optStr(catalog), m.optStr(dbSchema), m.str(tableName), out); err != nil {
			return err
		}
		sc, err = importSchema((*abi.Schema)(abi.Pointer(out)))
		return err
	}})
	if err != nil { // after an abandonment the call may still write sc
		return nil, err
	}
	return sc, nil
}

func (c *connection) GetTableTypes(ctx context.Context) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetTableTypes", func(f *cabi.Driver) uintptr { return f.ConnectionGetTableTypes }, none)
}

// call makes one call of the connection with no other arguments, bounded
// by ctx (withDeadline): a commit or rollback, whose success is an effect.
func (c *connection) call(ctx context.Context, what string, fn fnOf) error {
	return c.withDeadline(ctx, what, nil, funcCall{do: func(m *cmem) error { return c.drv.callIn(m, what, fn(c.drv.fns), c.h) }, changes: true})
}

func (c *connection) Commit(ctx context.Context) error {
	return c.call(ctx, "AdbcConnectionCommit", func(f *cabi.Driver) uintptr { return f.ConnectionCommit })
}

func (c *connection) Rollback(ctx context.Context) error {
	return c.call(ctx, "AdbcConnectionRollback", func(f *cabi.Driver) uintptr { return f.ConnectionRollback })
}

func (c *connection) ReadPartition(ctx context.Context, serialized []byte) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionReadPartition", func(f *cabi.Driver) uintptr { return f.ConnectionReadPartition }, func(m *cmem) []uintptr {
		return []uintptr{m.bytes(serialized), uintptr(len(serialized))}
	})
}

func (c *connection) GetStatistics(ctx context.Context, catalog, dbSchema, tableName *string, approximate bool) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetStatistics", func(f *cabi.Driver) uintptr { return f.ConnectionGetStatistics }, func(m *cmem) []uintptr {
		a := uintptr(0)
		if approximate {
			a = 1
		}
		return []uintptr{m.optStr(catalog), m.optStr(dbSchema), m.optStr(tableName), a}
	})
}

func (c *connection) GetStatisticNames(ctx context.Context) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetStatisticNames", func(f *cabi.Driver) uintptr { return f.ConnectionGetStatisticNames }, none)
}

// Cancel asks the driver to stop what the connection is doing; it does not
// wait for the connection's lock, as the call it cancels holds it.
func (c *connection) Cancel() error {
	c.life.RLock()
	defer c.life.RUnlock()
	if c.closed {
		return adbcerr.New(adbc.StatusInvalidState, "connection closed")
	}
	return c.drv.call("AdbcConnectionCancel", c.drv.fns.ConnectionCancel, c.h)
}

func (c *connection) NewStatement() (adbc.Statement, error) {
	var s *statement
	err := c.with(func(m *cmem) (err error) {
		s, err = newStatement(c, m)
		if err == nil {
			c.stmts[s] = struct{}{}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Close releases the connection, and first what of it is still open: its
// result readers' streams and its statements (a driver's must go before
// their connection). A second Close does nothing.
func (c *connection) Close() error {
	if c.abandoned() && c.afterAbandoned(func() { c.Close() }) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.life.Lock()
	defer c.life.Unlock()
	c.closed = true
	var errs []error
	for rd := range c.readers {
		rd.releaseStream()
	}
	for s := range c.stmts {
		errs = append(errs, s.release())
	}
	errs = append(errs, c.drv.callIn(c.scratch, "AdbcConnectionRelease", c.drv.fns.ConnectionRelease, c.h))
	c.scratch.destroy()
	ffi.Free(abi.Pointer(c.h))
	c.db.forget(c)
	errs = append(errs, c.drv.unref())
	return errors.Join(errs...)
}

// importSchema imports a schema the driver filled (and releases it).
func importSchema(s *abi.Schema) (*arrow.Schema, error) {
	sc, err := cdevice.ImportSchema(s)
	if err != nil {
		return nil, adbcerr.New(adbc.StatusInvalidData, "the driver's schema: "+err.Error())
	}
	return sc, nil
}
