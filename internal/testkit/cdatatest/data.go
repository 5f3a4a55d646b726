package cdatatest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var mem = memory.DefaultAllocator

// fromJSON builds an array of type dt from a JSON list.
func fromJSON(t testing.TB, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("%s from %s: %v", dt, js, err)
	}
	return a
}

// arrayCase is an array to copy into C and import back.
type arrayCase struct {
	name string
	make func(t testing.TB) arrow.Array
}

func jsonCase(name string, dt arrow.DataType, js string) arrayCase {
	return arrayCase{name, func(t testing.TB) arrow.Array { return fromJSON(t, dt, js) }}
}

var unionFields = []arrow.Field{
	{Name: "u0", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "u1", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
}

var unionCodes = []arrow.UnionTypeCode{5, 10}

// unionArray is [5: 128, 5: 256, 10: 127, 10: 25] in the given mode.
func unionArray(t testing.TB, mode arrow.UnionMode) arrow.Array {
	bld := array.NewBuilder(mem, arrow.UnionOf(mode, unionFields, unionCodes)).(array.UnionBuilder)
	defer bld.Release()
	ints := bld.Child(0).(*array.Int32Builder)
	bytes := bld.Child(1).(*array.Uint8Builder)
	for _, v := range []struct {
		code arrow.UnionTypeCode
		val  int
	}{{5, 128}, {5, 256}, {10, 127}, {10, 25}} {
		bld.Append(v.code)
		if v.code == 5 {
			ints.Append(int32(v.val))
			if mode == arrow.SparseMode {
				bytes.AppendNull()
			}
		} else {
			bytes.Append(uint8(v.val))
			if mode == arrow.SparseMode {
				ints.AppendNull()
			}
		}
	}
	return bld.NewArray()
}

var primitiveArrays = []arrayCase{
	jsonCase("int8", arrow.PrimitiveTypes.Int8, `[1, 2, null, -3]`),
	jsonCase("uint8", arrow.PrimitiveTypes.Uint8, `[1, 2, null, 3]`),
	jsonCase("int16", arrow.PrimitiveTypes.Int16, `[1, 2, -3]`),
	jsonCase("uint16", arrow.PrimitiveTypes.Uint16, `[1, 2, 3]`),
	jsonCase("int32", arrow.PrimitiveTypes.Int32, `[1, 2, null, -3]`),
	jsonCase("uint32", arrow.PrimitiveTypes.Uint32, `[1, 2, null, 3]`),
	jsonCase("int64", arrow.PrimitiveTypes.Int64, `[1, 2, -3]`),
	jsonCase("uint64", arrow.PrimitiveTypes.Uint64, `[1, 2, 3]`),
	jsonCase("bool", arrow.FixedWidthTypes.Boolean, `[true, false, null]`),
	{"null", func(testing.TB) arrow.Array { return array.NewNull(2) }},
	jsonCase("float32", arrow.PrimitiveTypes.Float32, `[1.5, null]`),
	jsonCase("float64", arrow.PrimitiveTypes.Float64, `[1.5, null]`),
	jsonCase("fixed size binary", &arrow.FixedSizeBinaryType{ByteWidth: 3}, `["Zm9v", "YmFy", null]`),
	jsonCase("binary", arrow.BinaryTypes.Binary, `["Zm9v", "YmFy", null]`),
	jsonCase("utf8", arrow.BinaryTypes.String, `["foo", "bar", null]`),
	jsonCase("largebinary", arrow.BinaryTypes.LargeBinary, `["Zm9v", "YmFy", null]`),
	jsonCase("largeutf8", arrow.BinaryTypes.LargeString, `["foo", "bar", null]`),
	jsonCase("decimal128", &arrow.Decimal128Type{Precision: 16, Scale: 4}, `["1234.567", null]`),
}

var structAB = arrow.StructOf(
	arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
)

func structABArray(t testing.TB) arrow.Array {
	return fromJSON(t, structAB, `[{"a": 1, "b": "foo"}, {"a": 2, "b": null}]`)
}

var nestedArrays = []arrayCase{
	jsonCase("list", arrow.ListOf(arrow.PrimitiveTypes.Int8), `[[1, 2], [3, null], null]`),
	jsonCase("large list", arrow.LargeListOf(arrow.PrimitiveTypes.Int8), `[[1, 2], [3, null], null]`),
	jsonCase("fixed size list", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64), `[[1, 2], [3, null], null]`),
	{"struct", structABArray},
	jsonCase("map", arrow.MapOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String),
		`[[{"key": 1, "value": "foo"}, {"key": 2, "value": null}], [{"key": 3, "value": "bar"}]]`),
	{"sparse union", func(t testing.TB) arrow.Array { return unionArray(t, arrow.SparseMode) }},
	{"dense union", func(t testing.TB) arrow.Array { return unionArray(t, arrow.DenseMode) }},
	jsonCase("run-end encoded", arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int8),
		`[1, 2, 2, 3, null, null, null, 4]`),
	{"empty struct", func(testing.TB) arrow.Array {
		bld := array.NewStructBuilder(mem, arrow.StructOf())
		defer bld.Release()
		bld.AppendNull()
		return bld.NewArray()
	}},
	{"empty dense union", func(testing.TB) arrow.Array {
		bld := array.NewEmptyDenseUnionBuilder(mem)
		defer bld.Release()
		return bld.NewArray()
	}},
	{"empty sparse union", func(testing.TB) arrow.Array {
		bld := array.NewEmptySparseUnionBuilder(mem)
		defer bld.Release()
		return bld.NewArray()
	}},
}

// primitiveBatches returns three record batches of every primitive type
// with some nulls (the stream scenarios' data); release them.
func primitiveBatches(t testing.TB) []arrow.RecordBatch {
	t.Helper()
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean,
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	}
	fields := make([]arrow.Field, len(types))
	for i, dt := range types {
		fields[i] = arrow.Field{Name: dt.Name() + "s", Type: dt, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	var recs []arrow.RecordBatch
	for b := 0; b < 3; b++ {
		cols := make([]arrow.Array, len(types))
		for i, dt := range types {
			vals := make([]string, 5)
			for r := range vals {
				switch {
				case (r+b)%4 == 1:
					vals[r] = "null"
				case dt.ID() == arrow.BOOL:
					vals[r] = fmt.Sprint((r+b)%2 == 0)
				default:
					vals[r] = fmt.Sprint(b*10 + r + 1)
				}
			}
			cols[i] = fromJSON(t, dt, "["+strings.Join(vals, ", ")+"]")
		}
		recs = append(recs, array.NewRecordBatch(schema, cols, 5))
		for _, c := range cols {
			c.Release()
		}
	}
	return recs
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
