package cdevice_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
)

const wideRows = 1024

// wideBatch builds a 1024-row record batch with 16 columns of common types,
// nulls in several of them. It is released when the test or benchmark ends.
func wideBatch(tb testing.TB) arrow.RecordBatch {
	tb.Helper()
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
	for i := range wideRows {
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

		if err := b.Field(6).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("key-%d", i%16)); err != nil {
			tb.Fatal(err)
		}
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
	rec := b.NewRecordBatch()
	tb.Cleanup(rec.Release)
	return rec
}

// tallBatch is one non-null int64 column of n rows.
func tallBatch(tb testing.TB, n int) arrow.RecordBatch {
	tb.Helper()
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	bld.Reserve(n)
	for i := range n {
		bld.UnsafeAppend(int64(i))
	}
	col := bld.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "i64", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	tb.Cleanup(rec.Release)
	return rec
}

// benchRoundTrip measures export + import + release of rec through structs
// in C heap memory that every iteration reuses.
func benchRoundTrip(b *testing.B, rec arrow.RecordBatch) {
	arr, sch := offHeap[abi.Array](b), offHeap[abi.Schema](b)
	b.ReportAllocs()
	for b.Loop() {
		if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
			b.Fatal(err)
		}
		got, err := cdevice.ImportRecordBatch(arr, sch)
		if err != nil {
			b.Fatal(err)
		}
		got.Release()
	}
}

// BenchmarkRoundTripWide and BenchmarkRoundTripTall measure the library as
// a Go program uses it, where an import of our own untouched export hands
// back the exported value. The FullImport variants turn that off and drive
// the import path a C producer's arrays take: parse, validate, wrap.
func BenchmarkRoundTripWide(b *testing.B) { benchIdentity(b, true, wideBatch(b)) }

func BenchmarkRoundTripTall(b *testing.B) { benchIdentity(b, true, tallBatch(b, 1_000_000)) }

func BenchmarkRoundTripWideFullImport(b *testing.B) { benchIdentity(b, false, wideBatch(b)) }

func BenchmarkRoundTripTallFullImport(b *testing.B) {
	benchIdentity(b, false, tallBatch(b, 1_000_000))
}

func benchIdentity(b *testing.B, identity bool, rec arrow.RecordBatch) {
	defer cdevice.SetIdentityImports(cdevice.SetIdentityImports(identity))
	benchRoundTrip(b, rec)
}

// The benchmarks' batches survive the round trip they measure.
func TestRoundTripBenchBatches(t *testing.T) {
	for name, rec := range map[string]arrow.RecordBatch{"wide": wideBatch(t), "tall": tallBatch(t, 1_000_000)} {
		t.Run(name, func(t *testing.T) {
			got, _, _ := roundTrip(t, rec)
			defer got.Release()
			for _, d := range schemaDiffs(rec.Schema(), got.Schema()) {
				t.Error(d)
			}
			if !array.RecordEqual(rec, got) {
				t.Error("values differ")
			}
		})
	}
}
