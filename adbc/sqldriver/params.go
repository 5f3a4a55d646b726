package sqldriver

import (
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// defaultTimestamp is the type of a time.Time parameter whose type the
// driver does not say: an instant, to the microsecond (the precision of
// most databases, and a range of ±290,000 years where nanoseconds would
// stop at 1677 and 2262).
var defaultTimestamp = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// createBoundRecord makes the one-row record batch of a statement's
// arguments. With a parameter schema, a named argument takes the column of
// the parameter of that name and a positional one its ordinal's; a
// parameter of known type gives its column that type. The columns are
// named as arrow-adbc names them: the argument's name, or else its ordinal
// (counted from 1 without a parameter schema, from 0 with one).
func createBoundRecord(args []driver.NamedValue, schema *arrow.Schema) (arrow.RecordBatch, error) {
	fields := make([]arrow.Field, len(args))
	cols := make([]arrow.Array, len(args))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for _, a := range args {
		idx, name := a.Ordinal-1, a.Name
		var dt arrow.DataType
		if schema != nil {
			if a.Name != "" {
				if ix := paramIndex(schema, a.Name); ix >= 0 {
					idx = ix
				}
			} else {
				name = strconv.Itoa(idx)
			}
			if idx >= 0 && idx < schema.NumFields() && schema.Field(idx).Type.ID() != arrow.NULL {
				dt = schema.Field(idx).Type
			}
		} else if name == "" {
			name = strconv.Itoa(a.Ordinal)
		}
		if idx < 0 || idx >= len(args) || cols[idx] != nil {
			return nil, adbcerr.New(adbc.StatusInvalidArgument, fmt.Sprintf("argument %d does not match a parameter of its own (mixed named and positional arguments?)", a.Ordinal))
		}
		arr, err := arrFromVal(a.Value, dt)
		if err != nil {
			return nil, err
		}
		cols[idx] = arr
		fields[idx] = arrow.Field{Name: name, Type: arr.DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1), nil
}

// bindable reports whether arrFromVal takes v's Go type as it is (it may
// still need a parameter type to succeed).
func bindable(v any) bool {
	switch v.(type) {
	case nil, bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64,
		float32, float64, string, []byte, time.Time,
		arrow.Date32, arrow.Date64, arrow.Time32, arrow.Time64, arrow.Timestamp,
		decimal128.Num, decimal256.Num:
		return true
	}
	return false
}

type typeMatch int

const (
	typeMismatch typeMatch = iota
	typeMatches
	typeUnknown // a parameter type this package does not check
)

// is reports whether v is a T or a *T.
func is[T any](v any) bool {
	switch v.(type) {
	case T, *T:
		return true
	}
	return false
}

// matchesType reports whether v, or what it points to, has the Go type
// that binds as a parameter of type id.
func matchesType(id arrow.Type, v any) typeMatch {
	var ok bool
	switch id {
	case arrow.BOOL:
		ok = is[bool](v)
	case arrow.INT8:
		ok = is[int8](v)
	case arrow.UINT8:
		ok = is[uint8](v)
	case arrow.INT16:
		ok = is[int16](v)
	case arrow.UINT16:
		ok = is[uint16](v)
	case arrow.INT32:
		ok = is[int32](v)
	case arrow.UINT32:
		ok = is[uint32](v)
	case arrow.INT64:
		ok = is[int64](v)
	case arrow.UINT64:
		ok = is[uint64](v)
	case arrow.FLOAT32:
		ok = is[float32](v)
	case arrow.FLOAT64:
		ok = is[float64](v)
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		ok = is[string](v)
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		ok = is[[]byte](v)
	case arrow.DATE32:
		ok = is[arrow.Date32](v) || is[time.Time](v)
	case arrow.DATE64:
		ok = is[arrow.Date64](v) || is[time.Time](v)
	case arrow.TIME32:
		ok = is[arrow.Time32](v) || is[time.Time](v)
	case arrow.TIME64:
		ok = is[arrow.Time64](v) || is[time.Time](v)
	case arrow.TIMESTAMP:
		ok = is[arrow.Timestamp](v) || is[time.Time](v)
	case arrow.DECIMAL128:
		ok = is[decimal128.Num](v)
	case arrow.DECIMAL256:
		ok = is[decimal256.Num](v)
	default:
		return typeUnknown
	}
	if ok {
		return typeMatches
	}
	return typeMismatch
}

// coerce converts v, a value of database/sql's default conversion (int64,
// float64, bool, []byte, string, time.Time), to the Go type of a
// parameter of type id, where it can without loss of range.
func coerce(v any, id arrow.Type) (any, bool) {
	switch v := v.(type) {
	case nil: // a driver.Valuer's NULL (sql.NullString{}...), a nil pointer
		return nil, true
	case int64:
		switch id {
		case arrow.INT8:
			return int8(v), v >= math.MinInt8 && v <= math.MaxInt8
		case arrow.INT16:
			return int16(v), v >= math.MinInt16 && v <= math.MaxInt16
		case arrow.INT32:
			return int32(v), v >= math.MinInt32 && v <= math.MaxInt32
		case arrow.INT64:
			return v, true
		case arrow.UINT8:
			return uint8(v), v >= 0 && v <= math.MaxUint8
		case arrow.UINT16:
			return uint16(v), v >= 0 && v <= math.MaxUint16
		case arrow.UINT32:
			return uint32(v), v >= 0 && v <= math.MaxUint32
		case arrow.UINT64:
			return uint64(v), v >= 0
		case arrow.FLOAT32:
			return float32(v), true
		case arrow.FLOAT64:
			return float64(v), true
		}
	case float64:
		switch id {
		case arrow.FLOAT32:
			return float32(v), true
		case arrow.FLOAT64:
			return v, true
		}
	case bool:
		return v, id == arrow.BOOL
	case string:
		switch id {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return v, true
		case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
			return []byte(v), true
		}
	case []byte:
		switch id {
		case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
			return v, true
		}
	case time.Time:
		switch id {
		case arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP:
			return v, true
		}
	}
	return nil, false
}

// build appends v to a new builder of dt and returns the one-value array.
func build[T any, B interface {
	array.Builder
	Append(T)
}](b B, v T) arrow.Array {
	defer b.Release()
	b.Append(v)
	return b.NewArray()
}

// arrFromVal makes a one-value array of val, of val's Go type (an int8 an
// Int8, a string a String...), or of dt where the value's type leaves a
// choice (a string a LargeString, a time.Time a Date32...) or needs one
// (an arrow.Timestamp its unit). dt is nil where the parameter's type is
// unknown. A nil val is a null of dt, or of the null type; a pointer is
// what it points to.
func arrFromVal(val any, dt arrow.DataType) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	if rv := reflect.ValueOf(val); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			val = nil
		} else {
			val = rv.Elem().Interface()
		}
	}
	id := arrow.NULL
	if dt != nil {
		id = dt.ID()
	}
	switch v := val.(type) {
	case nil:
		if dt == nil {
			return array.NewNull(1), nil
		}
		return array.MakeArrayOfNull(mem, dt, 1), nil
	case bool:
		return build(array.NewBooleanBuilder(mem), v), nil
	case int8:
		return build(array.NewInt8Builder(mem), v), nil
	case uint8:
		return build(array.NewUint8Builder(mem), v), nil
	case int16:
		return build(array.NewInt16Builder(mem), v), nil
	case uint16:
		return build(array.NewUint16Builder(mem), v), nil
	case int32:
		return build(array.NewInt32Builder(mem), v), nil
	case uint32:
		return build(array.NewUint32Builder(mem), v), nil
	case int64:
		return build(array.NewInt64Builder(mem), v), nil
	case uint64:
		return build(array.NewUint64Builder(mem), v), nil
	case float32:
		return build(array.NewFloat32Builder(mem), v), nil
	case float64:
		return build(array.NewFloat64Builder(mem), v), nil
	case arrow.Date32:
		return build(array.NewDate32Builder(mem), v), nil
	case arrow.Date64:
		return build(array.NewDate64Builder(mem), v), nil
	case string:
		if !utf8.ValidString(v) {
			// Arrow's strings are UTF-8, and a driver may take them on
			// trust (DuckDB aborted the process).
			return nil, adbcerr.New(adbc.StatusInvalidArgument, "a string parameter that is not valid UTF-8: pass bytes as []byte")
		}
		switch id {
		case arrow.LARGE_STRING:
			return build(array.NewLargeStringBuilder(mem), v), nil
		case arrow.STRING_VIEW:
			return build(array.NewStringViewBuilder(mem), v), nil
		}
		return build(array.NewStringBuilder(mem), v), nil
	case []byte:
		switch id {
		case arrow.LARGE_BINARY:
			return build(array.NewBinaryBuilder(mem, arrow.BinaryTypes.LargeBinary), v), nil
		case arrow.BINARY_VIEW:
			return build(array.NewBinaryViewBuilder(mem), v), nil
		}
		return build(array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary), v), nil
	case arrow.Time32:
		if id != arrow.TIME32 {
			return nil, errNeedsType(val)
		}
		return build(array.NewTime32Builder(mem, dt.(*arrow.Time32Type)), v), nil
	case arrow.Time64:
		if id != arrow.TIME64 {
			return nil, errNeedsType(val)
		}
		return build(array.NewTime64Builder(mem, dt.(*arrow.Time64Type)), v), nil
	case arrow.Timestamp:
		if id != arrow.TIMESTAMP {
			return nil, errNeedsType(val)
		}
		return build(array.NewTimestampBuilder(mem, dt.(*arrow.TimestampType)), v), nil
	case decimal128.Num:
		if id != arrow.DECIMAL128 {
			return nil, errNeedsType(val)
		}
		return build(array.NewDecimal128Builder(mem, dt.(*arrow.Decimal128Type)), v), nil
	case decimal256.Num:
		if id != arrow.DECIMAL256 {
			return nil, errNeedsType(val)
		}
		return build(array.NewDecimal256Builder(mem, dt.(*arrow.Decimal256Type)), v), nil
	case time.Time:
		return timeArray(v, dt)
	}
	return nil, adbcerr.New(adbc.StatusNotImplemented, fmt.Sprintf("unsupported parameter type %T", val))
}

// timeArray makes a one-value array of t: a timestamp (defaultTimestamp
// where dt is nil), a date, or a time of day (t's clock in its location).
func timeArray(t time.Time, dt arrow.DataType) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	if dt == nil {
		dt = defaultTimestamp
	}
	switch dt := dt.(type) {
	case *arrow.TimestampType:
		ts, err := arrow.TimestampFromTime(t, dt.Unit)
		if err != nil {
			return nil, adbcerr.New(adbc.StatusInvalidArgument, fmt.Sprintf("time %v as %s: %v", t, dt, err))
		}
		return build(array.NewTimestampBuilder(mem, dt), ts), nil
	case *arrow.Date32Type:
		return build(array.NewDate32Builder(mem), arrow.Date32FromTime(t)), nil
	case *arrow.Date64Type:
		return build(array.NewDate64Builder(mem), arrow.Date64FromTime(t)), nil
	case *arrow.Time32Type:
		return build(array.NewTime32Builder(mem, dt), arrow.Time32(timeOfDay(t)/dt.Unit.Multiplier())), nil
	case *arrow.Time64Type:
		return build(array.NewTime64Builder(mem, dt), arrow.Time64(timeOfDay(t)/dt.Unit.Multiplier())), nil
	}
	return nil, adbcerr.New(adbc.StatusNotImplemented, fmt.Sprintf("time.Time as a parameter of type %s is unsupported", dt))
}

// timeOfDay is the time since midnight on t's clock.
func timeOfDay(t time.Time) time.Duration {
	h, m, s := t.Clock()
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(s)*time.Second + time.Duration(t.Nanosecond())
}

func errNeedsType(v any) error {
	return adbcerr.New(adbc.StatusInvalidArgument, fmt.Sprintf("a parameter of Go type %T needs its type from the driver's parameter schema", v))
}
