package ndarray

import (
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
