package sqldriver

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// A conv is what this package does with values of one Arrow type, both
// ways: the Go type it reads them as (rows' Next and ColumnTypeScanType,
// and the type a parameter's value is coerced to), how it reads one, the
// Go types a parameter of the type binds, and how it builds a
// one-value array of such a value.
type conv struct {
	goType reflect.Type
	read   func(col arrow.Array, i int) (driver.Value, error) // nil: arreflect's
	binds  []reflect.Type                                     // none: a parameter type not checked
	build  func(v any, dt arrow.DataType) (arrow.Array, error)
}

// convOf is the entry of id (the zero conv where there is none), from an
// array: rows read one a cell.
func convOf(id arrow.Type) *conv {
	if int(id) < len(convByID) {
		return &convByID[id]
	}
	return &conv{}
}

var convByID = func() (t [arrow.DECIMAL64 + 1]conv) {
	for id, c := range convs {
		t[id] = c
	}
	return t
}()

// convs is the table, one entry per Arrow type this package knows.
var convs = map[arrow.Type]conv{
	arrow.BOOL:    plain[bool, *array.Boolean](array.NewBooleanBuilder),
	arrow.INT8:    plain[int8, *array.Int8](array.NewInt8Builder),
	arrow.UINT8:   plain[uint8, *array.Uint8](array.NewUint8Builder),
	arrow.INT16:   plain[int16, *array.Int16](array.NewInt16Builder),
	arrow.UINT16:  plain[uint16, *array.Uint16](array.NewUint16Builder),
	arrow.INT32:   plain[int32, *array.Int32](array.NewInt32Builder),
	arrow.UINT32:  plain[uint32, *array.Uint32](array.NewUint32Builder),
	arrow.INT64:   plain[int64, *array.Int64](array.NewInt64Builder),
	arrow.UINT64:  plain[uint64, *array.Uint64](array.NewUint64Builder),
	arrow.FLOAT32: plain[float32, *array.Float32](array.NewFloat32Builder),
	arrow.FLOAT64: plain[float64, *array.Float64](array.NewFloat64Builder),

	arrow.STRING:       text[*array.String](array.NewStringBuilder),
	arrow.LARGE_STRING: text[*array.LargeString](array.NewLargeStringBuilder),
	arrow.STRING_VIEW:  text[*array.StringView](array.NewStringViewBuilder),
	arrow.BINARY: bytes[*array.Binary](func(mem memory.Allocator) *array.BinaryBuilder {
		return array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	}),
	arrow.LARGE_BINARY: bytes[*array.LargeBinary](func(mem memory.Allocator) *array.BinaryBuilder {
		return array.NewBinaryBuilder(mem, arrow.BinaryTypes.LargeBinary)
	}),
	arrow.BINARY_VIEW:       bytes[*array.BinaryView](array.NewBinaryViewBuilder),
	arrow.FIXED_SIZE_BINARY: {goType: reflect.TypeFor[[]byte](), read: readBytes[*array.FixedSizeBinary]},

	arrow.DATE32: {goType: timeType, binds: binds[arrow.Date32](),
		read: func(col arrow.Array, i int) (driver.Value, error) { return col.(*array.Date32).Value(i).ToTime(), nil },
		build: func(v any, _ arrow.DataType) (arrow.Array, error) {
			return build(array.NewDate32Builder(mem), v.(arrow.Date32)), nil
		}},
	arrow.DATE64: {goType: timeType, binds: binds[arrow.Date64](),
		read: func(col arrow.Array, i int) (driver.Value, error) { return col.(*array.Date64).Value(i).ToTime(), nil },
		build: func(v any, _ arrow.DataType) (arrow.Array, error) {
			return build(array.NewDate64Builder(mem), v.(arrow.Date64)), nil
		}},
	arrow.TIME32: {goType: timeType, binds: binds[arrow.Time32](),
		read: func(col arrow.Array, i int) (driver.Value, error) {
			return col.(*array.Time32).Value(i).ToTime(col.DataType().(*arrow.Time32Type).Unit), nil
		},
		build: typed[arrow.Time32](array.NewTime32Builder)},
	arrow.TIME64: {goType: timeType, binds: binds[arrow.Time64](),
		read: func(col arrow.Array, i int) (driver.Value, error) {
			return col.(*array.Time64).Value(i).ToTime(col.DataType().(*arrow.Time64Type).Unit), nil
		},
		build: typed[arrow.Time64](array.NewTime64Builder)},
	arrow.TIMESTAMP: {goType: timeType, binds: binds[arrow.Timestamp](),
		read: func(col arrow.Array, i int) (driver.Value, error) {
			return col.(*array.Timestamp).Value(i).ToTime(col.DataType().(*arrow.TimestampType).Unit), nil
		},
		build: typed[arrow.Timestamp](array.NewTimestampBuilder)},
	arrow.DURATION: {goType: reflect.TypeFor[time.Duration](), read: readDuration},

	arrow.DECIMAL128: {goType: reflect.TypeFor[decimal128.Num](), read: readValue[decimal128.Num, *array.Decimal128],
		binds: []reflect.Type{reflect.TypeFor[decimal128.Num]()}, build: typed[decimal128.Num](array.NewDecimal128Builder)},
	arrow.DECIMAL256: {goType: reflect.TypeFor[decimal256.Num](), read: readValue[decimal256.Num, *array.Decimal256],
		binds: []reflect.Type{reflect.TypeFor[decimal256.Num]()}, build: typed[decimal256.Num](array.NewDecimal256Builder)},
	arrow.DECIMAL32: {goType: reflect.TypeFor[decimal.Decimal32]()},
	arrow.DECIMAL64: {goType: reflect.TypeFor[decimal.Decimal64]()},

	arrow.FLOAT16:                 {goType: reflect.TypeFor[float16.Num](), read: readValue[float16.Num, *array.Float16]},
	arrow.INTERVAL_MONTHS:         {goType: reflect.TypeFor[arrow.MonthInterval](), read: readValue[arrow.MonthInterval, *array.MonthInterval]},
	arrow.INTERVAL_DAY_TIME:       {goType: reflect.TypeFor[arrow.DayTimeInterval](), read: readValue[arrow.DayTimeInterval, *array.DayTimeInterval]},
	arrow.INTERVAL_MONTH_DAY_NANO: {goType: reflect.TypeFor[arrow.MonthDayNanoInterval](), read: readValue[arrow.MonthDayNanoInterval, *array.MonthDayNanoInterval]},
}

var (
	mem      = memory.DefaultAllocator
	timeType = reflect.TypeFor[time.Time]()
)

// valuer is an array whose element i is a T.
type valuer[T any] interface {
	arrow.Array
	Value(int) T
}

// appender is a builder that takes a T.
type appender[T any] interface {
	array.Builder
	Append(T)
}

func readValue[T any, A valuer[T]](col arrow.Array, i int) (driver.Value, error) {
	return col.(A).Value(i), nil
}

// plain is the conv of a type whose values are Go's T, as they are.
func plain[T any, A valuer[T], B appender[T]](newB func(memory.Allocator) B) conv {
	return conv{goType: reflect.TypeFor[T](), read: readValue[T, A], binds: []reflect.Type{reflect.TypeFor[T]()},
		build: func(v any, _ arrow.DataType) (arrow.Array, error) { return build(newB(mem), v.(T)), nil }}
}

// text is the conv of a string type: strings read as copies (the Arrow
// memory goes with its batch, maybe before database/sql is done with the
// value), bound only when valid UTF-8.
func text[A valuer[string], B appender[string]](newB func(memory.Allocator) B) conv {
	return conv{goType: reflect.TypeFor[string](), binds: []reflect.Type{reflect.TypeFor[string]()},
		read: func(col arrow.Array, i int) (driver.Value, error) { return strings.Clone(col.(A).Value(i)), nil },
		build: func(v any, _ arrow.DataType) (arrow.Array, error) {
			if !utf8.ValidString(v.(string)) {
				// Arrow's strings are UTF-8, and a driver may take them on
				// trust (DuckDB aborted the process).
				return nil, adbcerr.New(adbc.StatusInvalidArgument, "a string parameter that is not valid UTF-8: pass bytes as []byte")
			}
			return build(newB(mem), v.(string)), nil
		}}
}

// bytes is the conv of a binary type: values read as copies.
func bytes[A valuer[[]byte], B appender[[]byte]](newB func(memory.Allocator) B) conv {
	return conv{goType: reflect.TypeFor[[]byte](), read: readBytes[A], binds: []reflect.Type{reflect.TypeFor[[]byte]()},
		build: func(v any, _ arrow.DataType) (arrow.Array, error) { return build(newB(mem), v.([]byte)), nil }}
}

// readBytes reads a copy that is not nil when empty: an empty value is
// not a NULL.
func readBytes[A valuer[[]byte]](col arrow.Array, i int) (driver.Value, error) {
	b := col.(A).Value(i)
	return append(make([]byte, 0, len(b)), b...), nil
}

// binds are the Go types a parameter of a date or time type binds: its
// own, and time.Time (timeArray).
func binds[T any]() []reflect.Type { return []reflect.Type{reflect.TypeFor[T](), timeType} }

// typed builds a value of a type that needs its parameterized Arrow type
// (a unit, a precision): the parameter's, which the driver must say.
func typed[T any, D arrow.DataType, B appender[T]](newB func(memory.Allocator, D) B) func(any, arrow.DataType) (arrow.Array, error) {
	return func(v any, dt arrow.DataType) (arrow.Array, error) {
		d, ok := dt.(D)
		if !ok {
			return nil, errNeedsType(v)
		}
		return build(newB(mem, d), v.(T)), nil
	}
}

// readDuration reads a duration, an error past time.Duration's range.
func readDuration(col arrow.Array, i int) (driver.Value, error) {
	c := col.(*array.Duration)
	v, m := int64(c.Value(i)), int64(c.DataType().(*arrow.DurationType).Unit.Multiplier())
	if d := v * m; m != 0 && d/m == v {
		return time.Duration(d), nil
	}
	return nil, adbcerr.New(adbc.StatusInvalidData, fmt.Sprintf("a duration of %d %s is past time.Duration's ±292 years", v, c.DataType().(*arrow.DurationType).Unit))
}

// build appends v to b and returns the one-value array.
func build[T any, B appender[T]](b B, v T) arrow.Array {
	defer b.Release()
	b.Append(v)
	return b.NewArray()
}

// defaultType is the Arrow type a parameter of each Go type binds as when
// the driver does not say: the lowest numbered type that binds it (a
// string a STRING, not a LARGE_STRING). (time.Time: defaultTimestamp.)
var defaultType = func() map[reflect.Type]arrow.Type {
	m := map[reflect.Type]arrow.Type{}
	for id, c := range convs {
		for _, t := range c.binds {
			if cur, ok := m[t]; t != timeType && (!ok || id < cur) {
				m[t] = id
			}
		}
	}
	return m
}()
