package cai

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/internal/ndarray"
)

// nativeOrder is the typestr byte order of this host: '<' little-endian,
// '>' big-endian. Arrow data is in the host's byte order.
var nativeOrder = func() byte {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return '<'
	}
	return '>'
}()

// A dtype is a parsed typestr.
type dtype struct {
	order byte   // '<', '>' or '|'
	kind  byte   // NumPy's kind character: b i u f c m M O S U V
	size  int    // bytes per element
	unit  string // datetime64 / timedelta64 unit ("ns"); "" when generic
}

// parseTypestr checks the form of a typestr: a byte order ('<' little-,
// '>' big-endian, '|' not applicable), a kind, the size in bytes, and for
// datetimes and timedeltas an optional [unit]. '|' is refused for
// multi-byte numbers, whose byte order matters.
func parseTypestr(s string) (dtype, error) {
	if len(s) < 3 {
		return dtype{}, invalidf("typestr %q: want byte order, kind and size, e.g. \"<f8\"", s)
	}
	t := dtype{order: s[0], kind: s[1]}
	if !strings.ContainsRune("<>|", rune(t.order)) {
		return dtype{}, invalidf("typestr %q: byte order %q is not '<', '>' or '|'", s, t.order)
	}
	if !strings.ContainsRune("biufcmMOSUV", rune(t.kind)) {
		return dtype{}, invalidf("typestr %q: unknown kind %q", s, t.kind)
	}
	rest := s[2:]
	if i := strings.IndexByte(rest, '['); i >= 0 {
		if t.kind != 'm' && t.kind != 'M' || !strings.HasSuffix(rest, "]") || i+2 >= len(rest) {
			return dtype{}, invalidf("typestr %q: malformed unit", s)
		}
		t.unit, rest = rest[i+1:len(rest)-1], rest[:i]
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || n > 1<<30 || rest[0] == '+' {
		return dtype{}, invalidf("typestr %q: size %q is not a positive number of bytes", s, rest)
	}
	t.size = n
	switch t.kind {
	case 'b':
		if n != 1 {
			return dtype{}, invalidf("typestr %q: booleans have one byte", s)
		}
	case 'm', 'M':
		if n != 8 {
			return dtype{}, invalidf("typestr %q: datetimes and timedeltas have 8 bytes", s)
		}
	}
	if t.order == '|' && n > 1 && strings.ContainsRune("iufcmM", rune(t.kind)) {
		return dtype{}, invalidf("typestr %q: a %d-byte number needs a byte order ('<' or '>'), not '|'", s, n)
	}
	return t, nil
}

// ArrowType returns the Arrow type of a typestr:
//
//	|b1                  boolean (bits in Arrow: Import copies)
//	|i1 <i2 <i4 <i8      int8 int16 int32 int64
//	|u1 <u2 <u4 <u8      uint8 uint16 uint32 uint64
//	<f2 <f4 <f8          float16 float32 float64
//	<M8[s|ms|us|ns]      timestamp of that unit, no time zone
//	<m8[s|ms|us|ns]      duration of that unit
//
// with '>' in place of '<' on a big-endian host; one-byte types take any
// byte order. Data in the other byte order than the host's, complex
// numbers, long doubles, other units, strings, objects and structured
// types are refused with ErrUnsupported; a malformed typestr with
// ErrInvalid.
func ArrowType(typestr string) (arrow.DataType, error) {
	t, err := parseTypestr(typestr)
	if err != nil {
		return nil, err
	}
	return t.arrow()
}

func (t dtype) arrow() (arrow.DataType, error) {
	if t.size > 1 && t.order != nativeOrder {
		return nil, unsupportedf("typestr %s: %s data on a %s host (Arrow data is in the host's byte order)",
			t, endianName(t.order), endianName(nativeOrder))
	}
	switch t.kind {
	case 'b':
		return arrow.FixedWidthTypes.Boolean, nil
	case 'i':
		switch t.size {
		case 1:
			return arrow.PrimitiveTypes.Int8, nil
		case 2:
			return arrow.PrimitiveTypes.Int16, nil
		case 4:
			return arrow.PrimitiveTypes.Int32, nil
		case 8:
			return arrow.PrimitiveTypes.Int64, nil
		}
	case 'u':
		switch t.size {
		case 1:
			return arrow.PrimitiveTypes.Uint8, nil
		case 2:
			return arrow.PrimitiveTypes.Uint16, nil
		case 4:
			return arrow.PrimitiveTypes.Uint32, nil
		case 8:
			return arrow.PrimitiveTypes.Uint64, nil
		}
	case 'f':
		switch t.size {
		case 2:
			return arrow.FixedWidthTypes.Float16, nil
		case 4:
			return arrow.PrimitiveTypes.Float32, nil
		case 8:
			return arrow.PrimitiveTypes.Float64, nil
		}
	case 'c':
		return nil, unsupportedf("typestr %s: complex numbers have no Arrow type", t)
	case 'M', 'm':
		u, ok := timeUnits[t.unit]
		if !ok {
			return nil, unsupportedf("typestr %s: Arrow timestamps and durations have units s, ms, us and ns", t)
		}
		if t.kind == 'M' {
			return &arrow.TimestampType{Unit: u}, nil
		}
		return &arrow.DurationType{Unit: u}, nil
	}
	return nil, unsupportedf("typestr %s has no Arrow type here", t)
}

func (t dtype) String() string {
	s := string([]byte{t.order, t.kind}) + strconv.Itoa(t.size)
	if t.unit != "" {
		s += "[" + t.unit + "]"
	}
	return s
}

func endianName(order byte) string {
	if order == '>' {
		return "big-endian"
	}
	return "little-endian"
}

var timeUnits = map[string]arrow.TimeUnit{
	"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond,
}

// Typestr returns the typestr of a fixed-width Arrow type, in the host's
// byte order (the inverse of ArrowType): "|b1" for boolean and for the
// canonical arrow.bool8 extension, "|i1" and "|u1" for one-byte integers,
// "<M8[unit]" for timestamps without a time zone. Other types are refused
// with ErrUnsupported.
func Typestr(dt arrow.DataType) (string, error) {
	if dt == nil {
		return "", invalidf("nil type")
	}
	o := string(nativeOrder)
	if ndarray.IsBool8(dt) {
		return "|b1", nil
	}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return "|b1", nil
	case *arrow.Int8Type:
		return "|i1", nil
	case *arrow.Uint8Type:
		return "|u1", nil
	case *arrow.Int16Type:
		return o + "i2", nil
	case *arrow.Int32Type:
		return o + "i4", nil
	case *arrow.Int64Type:
		return o + "i8", nil
	case *arrow.Uint16Type:
		return o + "u2", nil
	case *arrow.Uint32Type:
		return o + "u4", nil
	case *arrow.Uint64Type:
		return o + "u8", nil
	case *arrow.Float16Type:
		return o + "f2", nil
	case *arrow.Float32Type:
		return o + "f4", nil
	case *arrow.Float64Type:
		return o + "f8", nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "", unsupportedf("%s: NumPy datetimes have no time zone", dt)
		}
		return o + "M8[" + t.Unit.String() + "]", nil
	case *arrow.DurationType:
		return o + "m8[" + t.Unit.String() + "]", nil
	}
	return "", unsupportedf("Arrow type %s has no typestr", dt)
}
