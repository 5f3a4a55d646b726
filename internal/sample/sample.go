// Package sample builds the record batches that the benchmarks, the tests
// and the cdevice command share: WideBatch and StreamBatches, which the
// benchmarks and `cdevice bench` measure with, so both measure the same
// data; NestedBatch, the nested shapes a device import sizes; and the selftest sample (Batch, Batches), a column of every Arrow
// type family, which `cdevice selftest` round trips through the C
// interfaces and other tests round trip the same way.
package sample

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// WideRows is the number of rows of WideBatch.
const WideRows = 1024

// WideBatch is the 16-column × 1024-row record batch of the round-trip
// benchmarks and `cdevice bench`: common types, nulls in several columns.
// The caller releases it.
func WideBatch() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "utf8", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bool", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "list_i32", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "struct", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		), Nullable: true},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
		{Name: "ts_us_utc", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "dec128", Type: &arrow.Decimal128Type{Precision: 20, Scale: 4}},
		{Name: "large_utf8", Type: arrow.BinaryTypes.LargeString},
		{Name: "fsl_f32x4", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)},
		{Name: "map", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "date32", Type: arrow.FixedWidthTypes.Date32},
		{Name: "binary", Type: arrow.BinaryTypes.Binary},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)

	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range WideRows {
		s := fmt.Sprintf("value-%d", i)
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 1000003)
		b.Field(1).(*array.Float64Builder).Append(float64(i) / 7)
		if sb := b.Field(2).(*array.StringBuilder); i%7 == 3 {
			sb.AppendNull()
		} else {
			sb.Append(s)
		}
		b.Field(3).(*array.BooleanBuilder).Append(i%3 == 0)

		lb := b.Field(4).(*array.ListBuilder)
		if i%11 == 5 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			for j := range i % 4 {
				lb.ValueBuilder().(*array.Int32Builder).Append(int32(i + j))
			}
		}

		stb := b.Field(5).(*array.StructBuilder)
		stb.Append(true)
		stb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		stb.FieldBuilder(1).(*array.StringBuilder).Append(s)

		// Appending a string to a fresh dictionary builder cannot fail.
		_ = b.Field(6).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("key-%d", i%16))
		b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)))
		b.Field(8).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)*10000 + 1234))
		b.Field(9).(*array.LargeStringBuilder).Append(s)

		fb := b.Field(10).(*array.FixedSizeListBuilder)
		fb.Append(true)
		for j := range 4 {
			fb.ValueBuilder().(*array.Float32Builder).Append(float32(i*4 + j))
		}

		mb := b.Field(11).(*array.MapBuilder)
		mb.Append(true)
		for j := range i % 3 {
			mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d", j))
			mb.ItemBuilder().(*array.Int64Builder).Append(int64(i * j))
		}

		b.Field(12).(*array.Date32Builder).Append(arrow.Date32(19000 + i))
		b.Field(13).(*array.BinaryBuilder).Append([]byte(s))
		b.Field(14).(*array.Int8Builder).Append(int8(i))
		b.Field(15).(*array.Uint64Builder).Append(uint64(i) << 33)
	}
	return b.NewRecordBatch()
}

// A Shape is a named maker of a sample batch.
type Shape struct {
	Name string
	Make func() arrow.RecordBatch
}

// DeviceShapes are the batches whose device imports the budget tests and
// benchmarks measure: the bench's wide batch and the nested one.
var DeviceShapes = []Shape{{"wide", WideBatch}, {"nested", NestedBatch}}

// NestedBatch is a WideRows-row batch of the nested shapes whose buffer
// sizes a device import reads from the device: a list of structs of
// strings, a dictionary of strings, a map of strings to strings, and
// string and binary views with values long enough to live in variadic
// buffers. The caller releases it.
func NestedBatch() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "list_struct", Type: arrow.ListOf(arrow.StructOf(
			arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int32},
		)), Nullable: true},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
		{Name: "map", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String), Nullable: true},
		{Name: "string_view", Type: arrow.BinaryTypes.StringView, Nullable: true},
		{Name: "binary_view", Type: arrow.BinaryTypes.BinaryView},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range WideRows {
		long := fmt.Sprintf("a value long enough for a variadic buffer #%d", i)
		lb := b.Field(0).(*array.ListBuilder)
		if i%13 == 7 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			sb := lb.ValueBuilder().(*array.StructBuilder)
			for j := range i % 3 {
				sb.Append(true)
				sb.FieldBuilder(0).(*array.StringBuilder).Append(fmt.Sprintf("s%d.%d", i, j))
				sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(i * j))
			}
		}
		_ = b.Field(1).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("word-%d", i%32))
		mb := b.Field(2).(*array.MapBuilder)
		mb.Append(true)
		for j := range i % 4 {
			mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d", j))
			mb.ItemBuilder().(*array.StringBuilder).Append(fmt.Sprintf("v%d", i+j))
		}
		if svb := b.Field(3).(*array.StringViewBuilder); i%9 == 4 {
			svb.AppendNull()
		} else {
			svb.Append(long)
		}
		b.Field(4).(*array.BinaryViewBuilder).Append([]byte(long[:10+i%30]))
	}
	return b.NewRecordBatch()
}

// StreamSchema is the schema of StreamBatches: 4 columns of common types.
var StreamSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
	{Name: "utf8", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bool", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

// StreamBatches builds the batches of the stream and async benchmarks: n
// batches of rows rows of StreamSchema with memory from mem (nil: the
// default allocator); the same n and rows always give the same values.
// The caller releases them.
func StreamBatches(mem memory.Allocator, n, rows int) []arrow.RecordBatch {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, StreamSchema)
	defer b.Release()
	recs := make([]arrow.RecordBatch, n)
	for i := range recs {
		for j := range rows {
			v := i*rows + j
			b.Field(0).(*array.Int64Builder).Append(int64(v) * 1000003)
			b.Field(1).(*array.Float64Builder).Append(float64(v) / 7)
			if sb := b.Field(2).(*array.StringBuilder); v%7 == 3 {
				sb.AppendNull()
			} else {
				sb.Append(fmt.Sprintf("value-%d", v))
			}
			b.Field(3).(*array.BooleanBuilder).Append(v%3 == 0)
		}
		recs[i] = b.NewRecordBatch()
	}
	return recs
}
