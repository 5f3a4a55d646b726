package cdevice_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
)

// wideBatch is sample.WideBatch, released when the test or benchmark ends.
func wideBatch(tb testing.TB) arrow.RecordBatch {
	rec := sample.WideBatch()
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

func benchIdentity(b *testing.B, on bool, rec arrow.RecordBatch) {
	defer identity.Set(identity.Set(on))
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
