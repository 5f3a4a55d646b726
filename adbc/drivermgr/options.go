package drivermgr

import (
	"github.com/purearrow/cdevice/abi"
	"strconv"
	"unsafe"

	"github.com/purearrow/cdevice/adbc"
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

// options are the option calls of one object h of driver d.
type options struct {
	d  *driver
	o  optionFns
	h  uintptr
	mu interface {
		Lock()
		Unlock()
	} // the object's serialization
}

func (o options) SetOption(key, value string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m cmem
	defer m.free()
	return o.d.call(o.o.what+"SetOption", o.o.set, o.h, m.str(key), m.str(value))
}

func (o options) SetOptionBytes(key string, value []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m cmem
	defer m.free()
	return o.d.call(o.o.what+"SetOptionBytes", o.o.setBytes, o.h, m.str(key), m.bytes(value), uintptr(len(value)))
}

func (o options) SetOptionInt(key string, value int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m cmem
	defer m.free()
	args := ffi.AppendUint64([]uintptr{o.h, m.str(key)}, uint64(value))
	return o.d.call(o.o.what+"SetOptionInt", o.o.setInt, args...)
}

func (o options) SetOptionDouble(key string, value float64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	fn := o.d.setDouble[o.o.kind]
	if fn == nil {
		return o.d.notImplemented(o.o.what + "SetOptionDouble")
	}
	var m cmem
	defer m.free()
	e := o.d.newError(&m)
	st := adbc.Status(fn(o.h, m.str(key), value, e))
	return o.d.result(o.o.what+"SetOptionDouble", st, errAt(e))
}

// GetOption reads a string option, asking again with the room the driver
// says the value needs.
func (o options) GetOption(key string) (string, error) {
	b, err := o.getBuf(o.o.what+"GetOption", o.o.get, key)
	if err != nil {
		return "", err
	}
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1] // the length counts the NUL
	}
	return string(b), nil
}

func (o options) GetOptionBytes(key string) ([]byte, error) {
	return o.getBuf(o.o.what+"GetOptionBytes", o.o.getBytes, key)
}

func (o options) getBuf(what string, fn uintptr, key string) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	size := uintptr(256)
	for range 2 {
		var m cmem
		buf := m.alloc(size)
		length := m.alloc(8)
		*(*uintptr)(abi.Pointer(length)) = size
		err := o.d.call(what, fn, o.h, m.str(key), buf, length)
		n := *(*uintptr)(abi.Pointer(length))
		if err == nil && n <= size {
			out := append([]byte(nil), unsafe.Slice((*byte)(abi.Pointer(buf)), n)...)
			m.free()
			return out, nil
		}
		m.free()
		if err != nil {
			return nil, err
		}
		if n > maxOptionBytes {
			return nil, adbc.Error{Code: adbc.StatusInvalidData, Msg: what + ": the driver claims a value of " + strconv.FormatUint(uint64(n), 10) + " bytes"}
		}
		size = n
	}
	return nil, adbc.Error{Code: adbc.StatusInvalidData, Msg: what + ": the value kept growing"}
}

const maxOptionBytes = 1 << 26

func (o options) GetOptionInt(key string) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m cmem
	defer m.free()
	out := m.alloc(8)
	if err := o.d.call(o.o.what+"GetOptionInt", o.o.getInt, o.h, m.str(key), out); err != nil {
		return 0, err
	}
	return *(*int64)(abi.Pointer(out)), nil
}

func (o options) GetOptionDouble(key string) (float64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m cmem
	defer m.free()
	out := m.alloc(8)
	if err := o.d.call(o.o.what+"GetOptionDouble", o.o.getDouble, o.h, m.str(key), out); err != nil {
		return 0, err
	}
	return *(*float64)(abi.Pointer(out)), nil
}
