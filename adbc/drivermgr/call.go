package drivermgr

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// cmem is C memory for a call's arguments and results: structs the driver
// writes (an AdbcError, an ArrowArrayStream...), strings it reads. It lives
// off the Go heap, so no Go pointer reaches the driver, and is given back
// by free after the call. A connection keeps one with a block of its own
// (newArena), reused call after call (its calls are serialized), so a
// call costs no trip to the C allocator; what does not fit is allocated
// apart.
type cmem struct {
	block      unsafe.Pointer // the arena, or nil
	size, used uintptr
	ptrs       []unsafe.Pointer // allocated apart, freed by free
}

// arenaSize is a connection's scratch block: every call but those with
// long strings (queries, options) fits.
const arenaSize = 4096

// newArena returns a cmem with a block of its own.
func newArena() (*cmem, error) {
	p, err := ffi.Calloc(arenaSize)
	if err != nil {
		return nil, err
	}
	return &cmem{block: p, size: arenaSize}, nil
}

// alloc returns n zeroed bytes, 8-aligned.
func (m *cmem) alloc(n uintptr) uintptr {
	if n8 := (n + 7) &^ 7; m.block != nil && n8 <= m.size-m.used {
		p := unsafe.Add(m.block, m.used)
		m.used += n8
		return uintptr(p)
	}
	p, err := ffi.Calloc(n)
	if err != nil {
		panic(err) // the C heap is exhausted, as new panics when Go's is
	}
	m.ptrs = append(m.ptrs, p)
	return uintptr(p)
}

// str returns s as a C string.
func (m *cmem) str(s string) uintptr {
	p := m.alloc(uintptr(len(s)) + 1)
	copy(unsafe.Slice((*byte)(abi.Pointer(p)), len(s)), s)
	return p
}

// optStr is str, or NULL for a nil pointer (an ADBC filter not given).
func (m *cmem) optStr(s *string) uintptr {
	if s == nil {
		return 0
	}
	return m.str(*s)
}

// bytes returns a C copy of b (NULL for an empty b).
func (m *cmem) bytes(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	p := m.alloc(uintptr(len(b)))
	copy(unsafe.Slice((*byte)(abi.Pointer(p)), len(b)), b)
	return p
}

// free gives back what was allocated apart and clears the arena for the
// next call.
func (m *cmem) free() {
	for _, p := range m.ptrs {
		ffi.Free(p)
	}
	m.ptrs = m.ptrs[:0]
	if m.used > 0 {
		clear(unsafe.Slice((*byte)(m.block), m.used))
		m.used = 0
	}
}

// destroy frees the arena too.
func (m *cmem) destroy() {
	m.free()
	if m.block != nil {
		ffi.Free(m.block)
		m.block = nil
	}
}

// call calls fn, one of the driver's functions, with args and an AdbcError
// as its last argument, and returns nil or the driver's error (the
// AdbcError released). A function the driver lacks (NULL, or a 1.1 call of
// a 1.0.0 driver) is an adbc.Error with StatusNotImplemented.
func (d *driver) call(what string, fn uintptr, args ...uintptr) error {
	var m cmem
	defer m.free()
	return d.callIn(&m, what, fn, args...)
}

// callIn is call with the AdbcError in m.
func (d *driver) callIn(m *cmem, what string, fn uintptr, args ...uintptr) error {
	if fn == 0 {
		return d.notImplemented(what)
	}
	e := d.newError(m)
	// A slice of its own for the call (which keeps it: purego's arguments
	// escape), so that the caller's args stay on its stack.
	all := append(make([]uintptr, 0, len(args)+1), args...)
	st := adbc.Status(uint8(ffi.Call(fn, append(all, e)...)))
	return d.result(what, st, errAt(e))
}

// newError is a zeroed AdbcError that asks a 1.1 driver for details.
func (d *driver) newError(m *cmem) uintptr {
	e := m.alloc(unsafe.Sizeof(cabi.Error{}))
	if d.version >= cabi.Version110 {
		(*cabi.Error)(abi.Pointer(e)).VendorCode = cabi.ErrorVendorCodePrivateData
	}
	return e
}

// result turns a status and the AdbcError the driver filled into an error
// (nil for StatusOK), and releases the AdbcError, once, either way.
func (d *driver) result(what string, st adbc.Status, e *cabi.Error) error {
	defer d.releaseError(e)
	if st == adbc.StatusOK {
		return nil
	}
	out := adbc.Error{Code: st, Msg: d.secrets.String(ffi.GoString(e.Message))}
	if out.Msg == "" {
		out.Msg = fmt.Sprintf("%s failed", what)
	}
	if e.VendorCode != cabi.ErrorVendorCodePrivateData {
		out.VendorCode = e.VendorCode
	}
	out.SqlState = e.SQLState
	out.Details = d.details(e)
	return adbcerr.Wrap(out)
}

// releaseError calls the AdbcError's release, if it has one, once.
func (d *driver) releaseError(e *cabi.Error) {
	if e.Release != 0 {
		ffi.Call1(e.Release, uintptr(unsafe.Pointer(e)))
		e.Release = 0
	}
}

// details reads a 1.1 AdbcError's details, where the driver has
// ErrorGetDetail and this platform can call it (it returns a struct by
// value).
func (d *driver) details(e *cabi.Error) []adbc.ErrorDetail {
	// A driver that left the error as it was handed over (vendor_code still
	// asking, no private_data) has no details, and may crash if asked.
	// (private_driver is the C manager's field, which drivers leave alone.)
	if d.getDetail == nil || d.fns.ErrorGetDetailCount == 0 || e.VendorCode != cabi.ErrorVendorCodePrivateData ||
		e.PrivateData == 0 {
		return nil
	}
	ep := uintptr(unsafe.Pointer(e))
	n := int(int32(ffi.Call(d.fns.ErrorGetDetailCount, ep)))
	var out []adbc.ErrorDetail
	for i := range min(n, maxDetails) {
		det := d.getDetail(ep, int32(i))
		if det.Key == 0 || det.ValueLength > maxDetailBytes || det.Value == 0 && det.ValueLength != 0 {
			continue
		}
		v := append([]byte(nil), unsafe.Slice((*byte)(abi.Pointer(det.Value)), det.ValueLength)...)
		out = append(out, &adbc.BinaryErrorDetail{Name: ffi.GoString(det.Key), Detail: v})
	}
	return out
}

// Bounds on what a driver's error details may claim.
const (
	maxDetails     = 1 << 10
	maxDetailBytes = 1 << 24
)

// notImplemented is the error of a call the driver does not have.
func (d *driver) notImplemented(what string) error {
	v := "1.1.0"
	if d.version < cabi.Version110 {
		v = "1.0.0"
	}
	return adbcerr.New(adbc.StatusNotImplemented, fmt.Sprintf("%s: the driver %s (ADBC %s) does not implement it", what, d.path, v))
}
