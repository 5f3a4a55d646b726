package sqldriver

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
	if v == nil {
		return true
	}
	_, ok := defaultType[reflect.TypeOf(v)]
	return ok || reflect.TypeOf(v) == timeType
}

type typeMatch int

const (
	typeMismatch typeMatch = iota
	typeMatches
	typeUnknown // a parameter type this package does not check
)

// matchesType reports whether v, or what it points to, has a Go type that
// binds as a parameter of type id.
func matchesType(id arrow.Type, v any) typeMatch {
	c := convOf(id)
	if len(c.binds) == 0 {
		return typeUnknown
	}
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if slices.Contains(c.binds, t) {
		return typeMatches
	}
	return typeMismatch
}

// coerce converts v, a value of database/sql's default conversion (int64,
// float64, bool, []byte, string, time.Time), to a Go type that binds as a
// parameter of type id, where it can without loss of range: v itself, an
// int64 to a narrower integer or a float, a float64 to a float32, a
// string to bytes.
func coerce(v any, id arrow.Type) (any, bool) {
	if v == nil { // a driver.Valuer's NULL (sql.NullString{}...), a nil pointer
		return nil, true
	}
	c := convOf(id)
	if len(c.binds) == 0 {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if slices.Contains(c.binds, rv.Type()) {
		return v, true
	}
	to := c.binds[0]
	if to.PkgPath() != "" { // only Go's own types: not an arrow.Date32
		return nil, false
	}
	switch k := to.Kind(); {
	case rv.Kind() == reflect.Int64 && k >= reflect.Int8 && k <= reflect.Int64:
		return rv.Convert(to).Interface(), !reflect.Zero(to).OverflowInt(rv.Int())
	case rv.Kind() == reflect.Int64 && k >= reflect.Uint8 && k <= reflect.Uint64:
		return rv.Convert(to).Interface(), rv.Int() >= 0 && !reflect.Zero(to).OverflowUint(uint64(rv.Int()))
	case (rv.Kind() == reflect.Int64 || rv.Kind() == reflect.Float64) && (k == reflect.Float32 || k == reflect.Float64):
		return rv.Convert(to).Interface(), true
	case rv.Kind() == reflect.String && to == reflect.TypeFor[[]byte]():
		return []byte(rv.String()), true
	}
	return nil, false
}

// arrFromVal makes a one-value array of val, of val's Go type (an int8 an
// Int8, a string a String...), or of dt where the value's type leaves a
// choice (a string a LargeString, a time.Time a Date32...) or needs one
// (an arrow.Timestamp its unit). dt is nil where the parameter's type is
// unknown. A nil val is a null of dt, or of the null type; a pointer is
// what it points to.
func arrFromVal(val any, dt arrow.DataType) (arrow.Array, error) {
	if rv := reflect.ValueOf(val); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			val = nil
		} else {
			val = rv.Elem().Interface()
		}
	}
	switch v := val.(type) {
	case nil:
		if dt == nil {
			return array.NewNull(1), nil
		}
		return array.MakeArrayOfNull(mem, dt, 1), nil
	case time.Time:
		return timeArray(v, dt)
	}
	t := reflect.TypeOf(val)
	id, ok := defaultType[t]
	if !ok {
		return nil, adbcerr.New(adbc.StatusNotImplemented, fmt.Sprintf("unsupported parameter type %T", val))
	}
	if dt != nil && slices.Contains(convOf(dt.ID()).binds, t) {
		id = dt.ID() // a string as a LARGE_STRING, bytes as a BINARY_VIEW...
	}
	return convOf(id).build(val, dt)
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
