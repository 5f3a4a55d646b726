package drivermgr

import (
	"strconv"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// errAt is the AdbcError at e.
func errAt(e uintptr) *cabi.Error { return (*cabi.Error)(abi.Pointer(e)) }

// optionFns are one kind of object's option calls (database, connection or
// statement); kind indexes driver.setDouble.
type optionFns struct {
	what                             string
	set, setBytes, setInt            uintptr
	get, getBytes, getInt, getDouble uintptr
	kind                             int
}

func (d *driver) dbOptions() optionFns {
	f := d.fns
	return optionFns{"AdbcDatabase", f.DatabaseSetOption, f.DatabaseSetOptionBytes, f.DatabaseSetOptionInt,
		f.DatabaseGetOption, f.DatabaseGetOptionBytes, f.DatabaseGetOptionInt, f.DatabaseGetOptionDouble, 0}
}

func (d *driver) connOptions() optionFns {
	f := d.fns
	return optionFns{"AdbcConnection", f.ConnectionSetOption, f.ConnectionSetOptionBytes, f.ConnectionSetOptionInt,
		f.ConnectionGetOption, f.ConnectionGetOptionBytes, f.ConnectionGetOptionInt, f.ConnectionGetOptionDouble, 1}
}

func (d *driver) stmtOptions() optionFns {
	f := d.fns
	return optionFns{"AdbcStatement", f.StatementSetOption, f.StatementSetOptionBytes, f.StatementSetOptionInt,
		f.StatementGetOption, f.StatementGetOptionBytes, f.StatementGetOptionInt, f.StatementGetOptionDouble, 2}
}

// options are the option calls of one object h of driver d, made in the
// object that holds it.
type options struct {
	d  *driver
	o  optionFns
	h  uintptr
	in holder
}

// A holder (a Database, connection or statement) runs a call holding its
// object (serialized with its connection), with C memory for it. (An
// interface, not a method value: that would be allocated with every
// statement.)
type holder interface {
	with(func(m *cmem) error) error
}

// SetOption sets a string option (the driver's SetOption).
func (o options) SetOption(key, value string) error {
	o.d.secrets.Option(key, value)
	return o.in.with(func(m *cmem) error {
		return o.d.callIn(m, o.o.what+"SetOption", o.o.set, o.h, m.str(key), m.str(value))
	})
}

// SetOptionBytes sets a bytes option (ADBC 1.1).
func (o options) SetOptionBytes(key string, value []byte) error {
	o.d.secrets.Option(key, string(value))
	return o.in.with(func(m *cmem) error {
		return o.d.callIn(m, o.o.what+"SetOptionBytes", o.o.setBytes, o.h, m.str(key), m.bytes(value), uintptr(len(value)))
	})
}

// SetOptionInt sets an integer option (ADBC 1.1).
func (o options) SetOptionInt(key string, value int64) error {
	return o.in.with(func(m *cmem) error {
		args := ffi.AppendUint64([]uintptr{o.h, m.str(key)}, uint64(value))
		return o.d.callIn(m, o.o.what+"SetOptionInt", o.o.setInt, args...)
	})
}

// SetOptionDouble sets a floating-point option (ADBC 1.1; not on 386 and
// arm, where purego cannot pass a double in a register).
func (o options) SetOptionDouble(key string, value float64) error {
	fn := o.d.setDouble[o.o.kind]
	if fn == nil {
		return o.d.notImplemented(o.o.what + "SetOptionDouble")
	}
	return o.in.with(func(m *cmem) error {
		e := o.d.newError(m)
		st := adbc.Status(fn(o.h, m.str(key), value, e))
		return o.d.result(o.o.what+"SetOptionDouble", st, errAt(e))
	})
}

// GetOption reads a string option (ADBC 1.1).
func (o options) GetOption(key string) (string, error) {
	b, err := o.getBuf(o.o.what+"GetOption", o.o.get, key)
	if err != nil {
		return "", err
	}
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	return string(b), nil
}

// GetOptionBytes reads a bytes option (ADBC 1.1).
func (o options) GetOptionBytes(key string) ([]byte, error) {
	return o.getBuf(o.o.what+"GetOptionBytes", o.o.getBytes, key)
}

// getBuf reads a string or bytes option, asking again with the room the
// driver says the value needs.
func (o options) getBuf(what string, fn uintptr, key string) (out []byte, err error) {
	size := uintptr(256)
	for range 2 {
		var n uintptr
		err = o.in.with(func(m *cmem) error {
			buf := m.alloc(size)
			length := m.alloc(8)
			*(*uintptr)(abi.Pointer(length)) = size
			if err := o.d.callIn(m, what, fn, o.h, m.str(key), buf, length); err != nil {
				return err
			}
			n = *(*uintptr)(abi.Pointer(length))
			if n <= size {
				out = append([]byte(nil), unsafe.Slice((*byte)(abi.Pointer(buf)), n)...)
			}
			return nil
		})
		if err != nil || n <= size {
			return out, err
		}
		if n > maxOptionBytes {
			return nil, adbcerr.New(adbc.StatusInvalidData, what+": the driver claims a value of "+strconv.FormatUint(uint64(n), 10)+" bytes")
		}
		size = n
	}
	return nil, adbcerr.New(adbc.StatusInvalidData, what+": the value kept growing")
}

const maxOptionBytes = 1 << 26

// GetOptionInt reads an integer option (ADBC 1.1).
func (o options) GetOptionInt(key string) (v int64, err error) {
	err = o.in.with(func(m *cmem) error {
		out := m.alloc(8)
		if err := o.d.callIn(m, o.o.what+"GetOptionInt", o.o.getInt, o.h, m.str(key), out); err != nil {
			return err
		}
		v = *(*int64)(abi.Pointer(out))
		return nil
	})
	return v, err
}

// GetOptionDouble reads a floating-point option (ADBC 1.1).
func (o options) GetOptionDouble(key string) (v float64, err error) {
	err = o.in.with(func(m *cmem) error {
		out := m.alloc(8)
		if err := o.d.callIn(m, o.o.what+"GetOptionDouble", o.o.getDouble, o.h, m.str(key), out); err != nil {
			return err
		}
		v = *(*float64)(abi.Pointer(out))
		return nil
	})
	return v, err
}
