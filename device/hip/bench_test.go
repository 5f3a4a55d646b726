package hip_test

import (
	"context"
	"iter"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt/gpurttest"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/selfexec"
	"github.com/purearrow/cdevice/stream"
)

// The benchmarks named Real run on the HIP runtime this machine has (a
// real AMD GPU's, chipStar's on an OpenCL device, or whatever
// $CDEVICE_HIP_LIBRARY names) and skip without one. Each puts Go beside C
// code that makes the same calls through the same library
// (testdata/c/copy_baseline.c), so that what is ours and what is the
// runtime's can be told apart:
//
//	go test ./device/hip -run XXX -bench BenchmarkReal -benchtime 5x -count 5

// The copy table: 64 MiB and 1 GiB copies (1 MiB and 4 MiB under -short)
// between host memory (pageable Go memory, or pinned by the runtime) and
// the GPU, each waited for, named as in
// BenchmarkRealToHost/<pageable|pinned>/<size>/<Go|C> ($CDEVICE_BENCH_SIZES
// sets other sizes: 16MiB,64MiB on a CPU).
func BenchmarkRealCopyToDevice(b *testing.B) { gpurttest.BenchmarkCopies(b, hip.Runtime, true) }
func BenchmarkRealToHost(b *testing.B)       { gpurttest.BenchmarkCopies(b, hip.Runtime, false) }

// BenchmarkRealDeviceStream is the cdevice bench command's
// ArrowDeviceArrayStream row (sample.WideBatch, copied to the GPU once and
// sent again and again) on the first HIP device, per batch (ns/op and
// batches/s):
//
//   - Stream: the whole import of each batch through an
//     ArrowDeviceArrayStream, as C's structs are read (identity imports
//     off);
//   - Go: the runtime calls of that import alone (the wait for the batch's
//     sync event, then the last offsets of its variable-length arrays read
//     back on one stream with one synchronization), through the binding;
//   - C: the same calls by plain C code through the same library.
//
// Stream minus Go is the import's own work on the host; Go minus C is the
// binding's; C is the runtime's floor.
func BenchmarkRealDeviceStream(b *testing.B) {
	rec := sample.WideBatch()
	defer rec.Release()
	reads := offsetReads(rec.Schema())
	b.Run("Stream", func(b *testing.B) { benchmarkDeviceStream(b, rec, reads) })
	gpurttest.BenchmarkSmallReads(b, hip.Runtime, reads, 4)
}

// offsetReads is how many values importing a batch of schema on a device
// reads back from it: the first and the last offset of every array with
// offsets (binary, string, list and map, their large forms; dictionaries'
// values included), as cdevice's cBufferSizes does.
func offsetReads(schema *arrow.Schema) int {
	var count func(dt arrow.DataType) int
	count = func(dt arrow.DataType) int {
		n := 0
		switch t := dt.(type) {
		case *arrow.DictionaryType:
			return count(t.IndexType) + count(t.ValueType)
		case *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType,
			*arrow.ListType, *arrow.LargeListType, *arrow.MapType:
			n = 2
		}
		if nested, ok := dt.(arrow.NestedType); ok {
			for _, f := range nested.Fields() {
				n += count(f.Type)
			}
		}
		return n
	}
	n := 0
	for _, f := range schema.Fields() {
		n += count(f.Type)
	}
	return n
}

// benchmarkDeviceStream sends rec, copied to the first HIP device once,
// b.N times through an ArrowDeviceArrayStream and imports every batch as
// C's structs are read. On the test double it checks that each batch
// costs the runtime reads copies.
func benchmarkDeviceStream(b *testing.B, rec arrow.RecordBatch, reads int) {
	d := gpurttest.RealDevices(b, hip.Runtime)[0]
	defer identity.Set(identity.Set(false))
	ctx := context.Background()
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, d)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Release()
	copies := doubleCounter(b, "hipMemcpyAsync")
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	n := b.N
	batches := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for range n {
			db.Retain()
			if !yield(db, nil) {
				return
			}
		}
	}
	if err := stream.ExportDeviceStream(rec.Schema(), d.Type(), iter.Seq2[*cdevice.DeviceRecordBatch, error](batches), s); err != nil {
		b.Fatal(err)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Release()
	before := copies()
	b.ResetTimer()
	got := 0
	for _, err := range r.All(ctx) {
		if err != nil {
			b.Fatal(err)
		}
		got++
	}
	b.StopTimer()
	if got != n {
		b.Fatalf("%d batches, want %d", got, n)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "batches/s")
	if c := copies() - before; before >= 0 && c != int64(n*reads) {
		b.Errorf("%d copies for %d batches, want %d a batch", c, n, reads)
	}
}

// doubleCounter returns how many times the HIP library has run call where
// the library is the test double (fake_cuda_call_count), else -1.
func doubleCounter(b *testing.B, call string) func() int64 {
	info, _ := hip.Backend.Probe(context.Background())
	lib, err := ffi.Open(info.Library)
	if err != nil {
		b.Fatal(err)
	}
	fn, err := lib.Symbol("fake_cuda_call_count")
	if err != nil {
		return func() int64 { return -1 }
	}
	return func() int64 {
		cs, err := ffi.CString(call)
		if err != nil {
			b.Fatal(err)
		}
		defer ffi.Free(cs)
		return int64(ffi.Call(fn, uintptr(cs)))
	}
}

// The Real benchmarks run here on the HIP double, standing in for a HIP
// machine's library, so that their code (the C side's HIP names above
// all) is proven before a GPU runs it; short, with one iteration each.
func TestRealBenchmarksOnDouble(t *testing.T) {
	fake := ctest.Path(t, "fakehip")
	cmd := selfexec.Command([]string{hip.EnvLibrary + "=" + fake},
		"-test.run=^$", "-test.bench=^BenchmarkReal", "-test.benchtime=1x", "-test.count=1", "-test.short")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rows []string
	for _, dir := range []string{"BenchmarkRealCopyToDevice", "BenchmarkRealToHost"} {
		for _, mem := range []string{"pageable", "pinned"} {
			for _, size := range []string{"1MiB", "4MiB"} {
				for _, side := range []string{"Go", "C"} {
					rows = append(rows, strings.Join([]string{dir, mem, size, side}, "/")+`(-\d+)?\s.*MB/s`)
				}
			}
		}
	}
	for _, side := range []string{"Stream", "Go", "C"} {
		rows = append(rows, "BenchmarkRealDeviceStream/"+side+`(-\d+)?\s.*batches/s`)
	}
	for _, row := range rows {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(string(out)) {
			t.Errorf("the benchmarks' output lacks %s:\n%s", row, out)
		}
	}
	if strings.Contains(string(out), "--- SKIP") || strings.Contains(string(out), "--- FAIL") {
		t.Errorf("a Real benchmark skipped or failed on the double:\n%s", out)
	}
}
