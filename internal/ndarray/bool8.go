package ndarray

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Bool8Name is the name of Arrow's canonical boolean-as-bytes type.
const Bool8Name = "arrow.bool8"

// IsBool8 reports whether dt is the canonical arrow.bool8 extension (int8
// storage, one byte a boolean), whichever package implements it.
func IsBool8(dt arrow.DataType) bool {
	t, ok := dt.(arrow.ExtensionType)
	return ok && t.ExtensionName() == Bool8Name && t.StorageType().ID() == arrow.INT8
}

// Bool8 returns an arrow.bool8 type: the one registered with arrow-go when
// a package registered one (arrow-go's arrow/extensions does), else a
// minimal one of this package, which is not registered (arrow-go's
// extensions package would refuse to start if a type of its name were).
// Arrays of either are one int8 byte a boolean.
func Bool8() arrow.ExtensionType {
	if t := arrow.GetExtensionType(Bool8Name); t != nil && IsBool8(t) {
		return t
	}
	return bool8
}

var bool8 = &bool8Type{ExtensionBase: arrow.ExtensionBase{Storage: arrow.PrimitiveTypes.Int8}}

type bool8Type struct{ arrow.ExtensionBase }

// bool8Array is an array of this package's bool8Type: every arrow.Array
// method works (ExtensionArrayBase's ValueStr panics), and values read,
// print and marshal as booleans, as arrow-go's own bool8 arrays do.
type bool8Array struct{ array.ExtensionArrayBase }

func (*bool8Type) ExtensionName() string   { return Bool8Name }
func (*bool8Type) Serialize() string       { return "" }
func (*bool8Type) ArrayType() reflect.Type { return reflect.TypeOf(bool8Array{}) }
func (*bool8Type) String() string          { return "extension<" + Bool8Name + ">" }

func (*bool8Type) ExtensionEquals(other arrow.ExtensionType) bool { return IsBool8(other) }

func (*bool8Type) Deserialize(storage arrow.DataType, _ string) (arrow.ExtensionType, error) {
	if storage.ID() != arrow.INT8 {
		return nil, invalidf("%s: storage type %s is not int8", Bool8Name, storage)
	}
	return bool8, nil
}

// NewBuilder makes builders of the type (array.NewBuilder, array.FromJSON).
func (*bool8Type) NewBuilder(mem memory.Allocator) array.Builder { return newBool8Builder(mem) }

// Value is element i (any non-zero byte is true).
func (a *bool8Array) Value(i int) bool { return a.Storage().(*array.Int8).Value(i) != 0 }

func (a *bool8Array) ValueStr(i int) string {
	if a.IsNull(i) {
		return array.NullValueStr
	}
	return strconv.FormatBool(a.Value(i))
}

func (a *bool8Array) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range a.Len() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.ValueStr(i))
	}
	b.WriteByte(']')
	return b.String()
}

func (a *bool8Array) GetOneForMarshal(i int) any {
	if a.IsNull(i) {
		return nil
	}
	return a.Value(i)
}

func (a *bool8Array) ValueAsAny(i int) any { return a.GetOneForMarshal(i) }

func (a *bool8Array) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i := range a.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		if a.IsNull(i) {
			b.WriteString("null")
		} else {
			b.WriteString(strconv.FormatBool(a.Value(i)))
		}
	}
	b.WriteByte(']')
	return []byte(b.String()), nil
}

// bool8Builder builds arrays of this package's bool8Type from booleans:
// Append, AppendValueFromString (ValueStr's form) and JSON (MarshalJSON's;
// numbers are taken as the bytes they are, as arrow-go's bool8 does).
type bool8Builder struct{ *array.ExtensionBuilder }

func newBool8Builder(mem memory.Allocator) *bool8Builder {
	return &bool8Builder{array.NewExtensionBuilder(mem, bool8)}
}

func (b *bool8Builder) storage() *array.Int8Builder { return b.Builder.(*array.Int8Builder) }

// Append appends v.
func (b *bool8Builder) Append(v bool) {
	if v {
		b.storage().Append(1)
	} else {
		b.storage().Append(0)
	}
}

func (b *bool8Builder) AppendValueFromString(s string) error {
	if s == array.NullValueStr {
		b.AppendNull()
		return nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%s: %w", Bool8Name, err)
	}
	b.Append(v)
	return nil
}

// appendToken appends one JSON value decoded as a token.
func (b *bool8Builder) appendToken(t any) error {
	switch v := t.(type) {
	case nil:
		b.AppendNull()
	case bool:
		b.Append(v)
	case string:
		return b.AppendValueFromString(v)
	case float64:
		return b.appendNumber(strconv.FormatFloat(v, 'g', -1, 64))
	case json.Number: // goccy/go-json's is this type too
		return b.appendNumber(v.String())
	default:
		return fmt.Errorf("%s: cannot append JSON value %v (%T)", Bool8Name, t, t)
	}
	return nil
}

func (b *bool8Builder) appendNumber(s string) error {
	n, err := strconv.ParseInt(s, 10, 8)
	if err != nil {
		return fmt.Errorf("%s: JSON value %s is not a boolean or an int8", Bool8Name, s)
	}
	b.storage().Append(int8(n))
	return nil
}

// UnmarshalJSON appends the values of a JSON array.
func (b *bool8Builder) UnmarshalJSON(data []byte) error {
	dec := newJSONDecoder(data)
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%s: JSON is not an array", Bool8Name)
	}
	return b.Unmarshal(dec)
}

var (
	_ array.CustomExtensionBuilder = (*bool8Type)(nil)
	_ array.ExtensionArray         = (*bool8Array)(nil)
	_ array.Builder                = (*bool8Builder)(nil)
)
