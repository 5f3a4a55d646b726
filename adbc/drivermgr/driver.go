package drivermgr

import (
	"errors"
	"fmt"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/internal/redact"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// driver is one initialized driver: its library and the function table its
// entry point filled, at the ADBC version it accepted. Each Database has
// its own, released with it.
type driver struct {
	path, entrypoint string
	version          int
	fns              *cabi.Driver // C memory the entry point wrote
	// getDetail and the SetOptionDouble calls are bound with ffi.Bind
	// (a struct returned by value, a double argument); nil where this
	// platform cannot make such calls.
	getDetail func(err uintptr, index int32) cabi.ErrorDetail
	setDouble [3]func(h, key uintptr, v float64, err uintptr) uint8 // database, connection, statement
	// refs: the database and its open connections; the last to go
	// releases the driver.
	refs atomic.Int32
	// secrets: the credentials the user gave its database (options,
	// profile, later SetOptions), masked in every message of the driver's.
	secrets *redact.Secrets
}

// initDriver calls the entry point init of the library at path: ADBC
// 1.1.0 first, then 1.0.0 for a driver that answers NotImplemented (whose
// 1.1 calls then fail with NotImplemented, never calling what it lacks).
func initDriver(path, entrypoint string, init uintptr) (*driver, error) {
	p, err := ffi.Calloc(unsafe.Sizeof(cabi.Driver{}))
	if err != nil {
		return nil, err
	}
	d := &driver{path: path, entrypoint: entrypoint, fns: (*cabi.Driver)(p)}
	for _, v := range []int{cabi.Version110, cabi.Version100} {
		*d.fns = cabi.Driver{}
		d.version = v
		var m cmem
		e := d.newError(&m)
		st := adbc.Status(uint8(ffi.Call(init, uintptr(v), uintptr(p), e)))
		err = d.result(entrypoint, st, (*cabi.Error)(abi.Pointer(e)))
		m.free()
		if !errors.Is(err, adbcerr.NotImplemented) {
			break
		}
	}
	if err != nil {
		ffi.Free(p)
		return nil, fmt.Errorf("%w (loading %s from %s)", err, entrypoint, path)
	}
	if d.version < cabi.Version110 {
		// A 1.0.0 driver owns only the first part of the table.
		clear(unsafe.Slice((*byte)(unsafe.Add(p, cabi.Size100)), unsafe.Sizeof(cabi.Driver{})-cabi.Size100))
	}
	if missing := d.missing(); missing != "" {
		d.release()
		return nil, adbcerr.New(adbc.StatusInternal, fmt.Sprintf("the driver %s (%s) left %s NULL: not an ADBC driver?", path, entrypoint, missing))
	}
	d.bind()
	d.refs.Store(1)
	return d, nil
}

func (d *driver) ref() { d.refs.Add(1) }

// unref drops a reference, releasing the driver with the last.
func (d *driver) unref() error {
	if d.refs.Add(-1) == 0 {
		return d.release()
	}
	return nil
}

// missing names a function every driver must have that this one lacks.
func (d *driver) missing() string {
	f := d.fns
	for _, c := range []struct {
		name string
		fn   uintptr
	}{
		{"DatabaseNew", f.DatabaseNew}, {"DatabaseInit", f.DatabaseInit}, {"DatabaseRelease", f.DatabaseRelease},
		{"DatabaseSetOption", f.DatabaseSetOption},
		{"ConnectionNew", f.ConnectionNew}, {"ConnectionInit", f.ConnectionInit}, {"ConnectionRelease", f.ConnectionRelease},
		{"StatementNew", f.StatementNew}, {"StatementRelease", f.StatementRelease},
	} {
		if c.fn == 0 {
			return c.name
		}
	}
	return ""
}

// bind binds the calls ffi.Call cannot make; where this platform cannot
// either, they stay nil (no error details; SetOptionDouble not
// implemented).
func (d *driver) bind() {
	if d.fns.ErrorGetDetail != 0 && ffi.Bind(&d.getDetail, d.fns.ErrorGetDetail) != nil {
		d.getDetail = nil
	}
	for i, fn := range []uintptr{d.fns.DatabaseSetOptionDouble, d.fns.ConnectionSetOptionDouble, d.fns.StatementSetOptionDouble} {
		if fn != 0 && ffi.Bind(&d.setDouble[i], fn) != nil {
			d.setDouble[i] = nil
		}
	}
}

// release calls the driver's release, if it has one, and frees its table;
// the library stays loaded (unloading C code is unsafe).
func (d *driver) release() error {
	if d.fns == nil {
		return nil
	}
	var err error
	if d.fns.Release != 0 {
		err = d.call("AdbcDriver.release", d.fns.Release, uintptr(unsafe.Pointer(d.fns)))
	}
	ffi.Free(unsafe.Pointer(d.fns))
	d.fns = nil
	return err
}
