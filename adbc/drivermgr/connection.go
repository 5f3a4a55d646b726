package drivermgr

import (
	"context"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// A Connection is an AdbcConnection. Its calls, its statements' and its
// result readers' are serialized (an ADBC connection is not safe for
// concurrent use); it is safe for concurrent use.
type Connection struct {
	mu     sync.Mutex
	drv    *driver
	h      uintptr // struct AdbcConnection, C memory
	opts   options
	closed bool
}

var (
	_ adbc.Connection              = (*Connection)(nil)
	_ adbc.GetSetOptions           = (*Connection)(nil)
	_ adbc.ConnectionGetStatistics = (*Connection)(nil)
)

// newConnection makes and initializes a connection of db; db.mu is held.
func newConnection(db *Database) (*Connection, error) {
	d := db.drv
	p, err := ffi.Calloc(unsafe.Sizeof(cabi.Handle{}))
	if err != nil {
		return nil, err
	}
	c := &Connection{drv: d, h: uintptr(p)}
	if err := d.call("AdbcConnectionNew", d.fns.ConnectionNew, c.h); err != nil {
		ffi.Free(p)
		return nil, err
	}
	if err := d.call("AdbcConnectionInit", d.fns.ConnectionInit, c.h, db.h); err != nil {
		d.call("AdbcConnectionRelease", d.fns.ConnectionRelease, c.h)
		ffi.Free(p)
		return nil, err
	}
	c.opts = options{d: d, o: d.connOptions(), h: c.h, mu: &c.mu}
	d.ref()
	return c, nil
}

// lock takes the connection for one call, or says why it cannot be used.
func (c *Connection) lock() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return adbc.Error{Code: adbc.StatusInvalidState, Msg: "connection closed"}
	}
	return nil
}

// do runs one call of the connection under its lock.
func (c *Connection) do(what string, fn uintptr, args ...uintptr) error {
	if err := c.lock(); err != nil {
		return err
	}
	defer c.mu.Unlock()
	return c.drv.call(what, fn, append([]uintptr{c.h}, args...)...)
}

// reader runs a call that fills an ArrowArrayStream and returns it as a
// reader whose calls are serialized with the connection's.
func (c *Connection) reader(ctx context.Context, what string, fn uintptr, args ...uintptr) (array.RecordReader, error) {
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s)
	if err := c.do(what, fn, append(args, uintptr(unsafe.Pointer(s)))...); err != nil {
		return nil, err
	}
	return newReader(ctx, c, s, nil)
}

func (c *Connection) GetInfo(ctx context.Context, codes []adbc.InfoCode) (array.RecordReader, error) {
	var m cmem
	defer m.free()
	var p uintptr
	if len(codes) > 0 {
		p = m.alloc(uintptr(4 * len(codes)))
		dst := unsafe.Slice((*uint32)(abi.Pointer(p)), len(codes))
		for i, code := range codes {
			dst[i] = uint32(code)
		}
	}
	return c.reader(ctx, "AdbcConnectionGetInfo", c.drv.fns.ConnectionGetInfo, p, uintptr(len(codes)))
}

func (c *Connection) GetObjects(ctx context.Context, depth adbc.ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error) {
	var m cmem
	defer m.free()
	var types uintptr
	if tableType != nil {
		types = m.alloc(uintptr(len(tableType)+1) * unsafe.Sizeof(uintptr(0)))
		list := unsafe.Slice((*uintptr)(abi.Pointer(types)), len(tableType)+1)
		for i, t := range tableType {
			list[i] = m.str(t)
		}
	}
	return c.reader(ctx, "AdbcConnectionGetObjects", c.drv.fns.ConnectionGetObjects, uintptr(depth),
		m.optStr(catalog), m.optStr(dbSchema), m.optStr(tableName), types, m.optStr(columnName))
}

func (c *Connection) GetTableSchema(_ context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error) {
	var m cmem
	defer m.free()
	s := cdevice.New[abi.Schema]()
	defer cdevice.Free(s)
	if err := c.do("AdbcConnectionGetTableSchema", c.drv.fns.ConnectionGetTableSchema,
		m.optStr(catalog), m.optStr(dbSchema), m.str(tableName), uintptr(unsafe.Pointer(s))); err != nil {
		return nil, err
	}
	return importSchema(s)
}

func (c *Connection) GetTableTypes(ctx context.Context) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetTableTypes", c.drv.fns.ConnectionGetTableTypes)
}

func (c *Connection) Commit(context.Context) error {
	return c.do("AdbcConnectionCommit", c.drv.fns.ConnectionCommit)
}

func (c *Connection) Rollback(context.Context) error {
	return c.do("AdbcConnectionRollback", c.drv.fns.ConnectionRollback)
}

func (c *Connection) ReadPartition(ctx context.Context, serialized []byte) (array.RecordReader, error) {
	var m cmem
	defer m.free()
	return c.reader(ctx, "AdbcConnectionReadPartition", c.drv.fns.ConnectionReadPartition, m.bytes(serialized), uintptr(len(serialized)))
}

func (c *Connection) GetStatistics(ctx context.Context, catalog, dbSchema, tableName *string, approximate bool) (array.RecordReader, error) {
	var m cmem
	defer m.free()
	a := uintptr(0)
	if approximate {
		a = 1
	}
	return c.reader(ctx, "AdbcConnectionGetStatistics", c.drv.fns.ConnectionGetStatistics,
		m.optStr(catalog), m.optStr(dbSchema), m.optStr(tableName), a)
}

func (c *Connection) GetStatisticNames(ctx context.Context) (array.RecordReader, error) {
	return c.reader(ctx, "AdbcConnectionGetStatisticNames", c.drv.fns.ConnectionGetStatisticNames)
}

// Cancel asks the driver to stop what the connection is doing; it does not
// wait for the connection's lock, as the call it cancels holds it.
func (c *Connection) Cancel() error {
	return c.drv.call("AdbcConnectionCancel", c.drv.fns.ConnectionCancel, c.h)
}

func (c *Connection) NewStatement() (adbc.Statement, error) {
	if err := c.lock(); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	return newStatement(c)
}

// Close releases the connection. A second Close does nothing.
func (c *Connection) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.drv.call("AdbcConnectionRelease", c.drv.fns.ConnectionRelease, c.h)
	ffi.Free(abi.Pointer(c.h))
	if rerr := c.drv.unref(); err == nil {
		err = rerr
	}
	return err
}

func (c *Connection) SetOption(key, value string) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.opts.SetOption(key, value)
}

func (c *Connection) SetOptionBytes(key string, value []byte) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.opts.SetOptionBytes(key, value)
}

func (c *Connection) SetOptionInt(key string, value int64) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.opts.SetOptionInt(key, value)
}

func (c *Connection) SetOptionDouble(key string, value float64) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.opts.SetOptionDouble(key, value)
}

func (c *Connection) GetOption(key string) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	return c.opts.GetOption(key)
}

func (c *Connection) GetOptionBytes(key string) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.opts.GetOptionBytes(key)
}

func (c *Connection) GetOptionInt(key string) (int64, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	return c.opts.GetOptionInt(key)
}

func (c *Connection) GetOptionDouble(key string) (float64, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	return c.opts.GetOptionDouble(key)
}

func (c *Connection) check() error {
	if err := c.lock(); err != nil {
		return err
	}
	c.mu.Unlock()
	return nil
}

// importSchema imports a schema the driver filled (and releases it).
func importSchema(s *abi.Schema) (*arrow.Schema, error) {
	sc, err := cdevice.ImportSchema(s)
	if err != nil {
		return nil, adbc.Error{Code: adbc.StatusInvalidData, Msg: "the driver's schema: " + err.Error()}
	}
	return sc, nil
}
