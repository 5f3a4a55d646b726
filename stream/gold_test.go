package stream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	_ "github.com/purearrow/cdevice/device/opencl" // PoCL in CI
	"github.com/purearrow/cdevice/stream"
)

// goldDir holds Arrow's integration gold files (see its README.md).
const goldDir = "../testdata/arrow-integration/cpp-21.0.0"

// goldCases lists the gold cases: every *.stream file in goldDir without
// its extension, no-batch and zero-length cases included.
func goldCases(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(goldDir, "*.stream"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no gold files in %s", goldDir)
	}
	cases := make([]string, len(files))
	for i, f := range files {
		cases[i] = strings.TrimSuffix(filepath.Base(f), ".stream")
	}
	sort.Strings(cases)
	return cases
}

// goldAllocator is a checked allocator that fails the test if any of its
// memory is still held when the test ends (an export never released).
func goldAllocator(tb testing.TB) memory.Allocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	tb.Cleanup(func() { mem.AssertSize(tb, 0) })
	return mem
}

// openGold opens the gold case's .stream file as an ipc.Reader, the source
// that the tests export batch by batch. The caller releases it.
func openGold(tb testing.TB, c string, mem memory.Allocator) *ipc.Reader {
	tb.Helper()
	f, err := os.Open(filepath.Join(goldDir, c+".stream"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	r, err := ipc.NewReader(f, ipc.WithAllocator(mem))
	if err != nil {
		tb.Fatalf("%s: %v", c, err)
	}
	return r
}

// readGold reads every batch of the gold case: the expected values. They
// stay retained until the test ends.
func readGold(tb testing.TB, c string) (*arrow.Schema, []arrow.RecordBatch) {
	tb.Helper()
	r := openGold(tb, c, goldAllocator(tb))
	defer r.Release()
	var recs []arrow.RecordBatch
	tb.Cleanup(func() {
		for _, rec := range recs {
			rec.Release()
		}
	})
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		tb.Fatalf("%s: %v", c, err)
	}
	return r.Schema(), recs
}

// offHeap returns a zeroed T in C heap memory (cdevice.New), freed when the
// test ends: structs that a producer fills must not be Go memory.
func offHeap[T cdevice.Struct](tb testing.TB) *T {
	p := cdevice.New[T]()
	tb.Cleanup(func() { cdevice.Free(p) })
	return p
}

// schemaDiffs compares two schemas in full: Equal, the schema's metadata,
// and the metadata of every field at every depth. One line per difference.
func schemaDiffs(want, got *arrow.Schema) []string {
	if got == nil {
		return []string{"got a nil schema"}
	}
	var d []string
	if !want.Equal(got) {
		d = append(d, fmt.Sprintf("schemas differ:\nwant %s\ngot  %s", want, got))
	}
	if !want.Metadata().Equal(got.Metadata()) {
		d = append(d, fmt.Sprintf("schema metadata: want %v, got %v", want.Metadata(), got.Metadata()))
	}
	return append(d, fieldsDiffs("", want.Fields(), got.Fields())...)
}

func fieldsDiffs(path string, want, got []arrow.Field) []string {
	if len(want) != len(got) {
		return []string{fmt.Sprintf("%s: want %d fields, got %d", path, len(want), len(got))}
	}
	var d []string
	for i := range want {
		p := path + "/" + want[i].Name
		if !want[i].Metadata.Equal(got[i].Metadata) {
			d = append(d, fmt.Sprintf("%s: metadata: want %v, got %v", p, want[i].Metadata, got[i].Metadata))
		}
		d = append(d, fieldsDiffs(p, childFields(want[i].Type), childFields(got[i].Type))...)
	}
	return d
}

// childFields are the fields nested in dt, looking through extension and
// dictionary types.
func childFields(dt arrow.DataType) []arrow.Field {
	for {
		switch t := dt.(type) {
		case arrow.ExtensionType:
			dt = t.StorageType()
		case *arrow.DictionaryType:
			dt = t.ValueType
		case arrow.NestedType:
			return t.Fields()
		default:
			return nil
		}
	}
}

// checkBatch compares one imported batch with the expected one.
func checkBatch(tb testing.TB, i int, want, got arrow.RecordBatch) {
	tb.Helper()
	for _, d := range schemaDiffs(want.Schema(), got.Schema()) {
		tb.Errorf("batch %d: %s", i, d)
	}
	if !array.RecordEqual(want, got) {
		tb.Errorf("batch %d: values differ:\nwant %v\ngot  %v", i, want, got)
	}
}

// forEachIdentity runs f with identity imports on (a stream we exported is
// read directly) and off (the path a C producer's stream takes).
func forEachIdentity(t *testing.T, f func(t *testing.T)) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "full", true: "identity"}[on]
		t.Run(name, func(t *testing.T) {
			defer cdevice.SetIdentityImports(cdevice.SetIdentityImports(on))
			f(t)
		})
	}
}

// Every gold case, read batch by batch from its .stream file by an
// ipc.Reader that is exported as an ArrowArrayStream and imported back:
// equal schema, equal batches, the same count.
func TestGoldStream(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		for _, c := range goldCases(t) {
			t.Run(c, func(t *testing.T) {
				schema, want := readGold(t, c)
				src := openGold(t, c, goldAllocator(t))
				s := offHeap[abi.ArrayStream](t)
				err := stream.ExportReader(src, s)
				src.Release() // the export holds its own reference
				if err != nil {
					t.Fatalf("export: %v", err)
				}
				r, err := stream.ImportReader(s)
				if err != nil {
					t.Fatalf("import: %v", err)
				}
				drainGold(t, r, schema, want)
				if !s.Released() {
					t.Error("releasing the Reader did not release the C stream")
				}
			})
		}
	})
}

// drainGold reads r to the end, compares it with the expected schema and
// batches, and releases it.
func drainGold(t *testing.T, r *stream.Reader, schema *arrow.Schema, want []arrow.RecordBatch) {
	t.Helper()
	defer r.Release()
	for _, d := range schemaDiffs(schema, r.Schema()) {
		t.Errorf("stream schema: %s", d)
	}
	n := 0
	for r.Next() {
		if n < len(want) {
			checkBatch(t, n, want[n], r.RecordBatch())
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatalf("after %d batches: %v", n, err)
	}
	if n != len(want) {
		t.Errorf("got %d batches, want %d", n, len(want))
	}
	if r.Next() {
		t.Error("Next after the end returned true")
	}
}

// Every gold case through an ArrowDeviceArrayStream on device.CPU.
func TestGoldDeviceStreamCPU(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) { goldDeviceStream(t, device.CPU) })
}

// Every gold case through an ArrowDeviceArrayStream on the first OpenCL
// device (PoCL in CI).
func TestGoldDeviceStreamOpenCL(t *testing.T) {
	goldDeviceStream(t, openCLDevice(t))
}

// openCLDevice returns the first device of the OpenCL backend, or skips
// (fails in CI, which installs PoCL).
func openCLDevice(tb testing.TB) device.Device {
	tb.Helper()
	skip := tb.Skipf
	if os.Getenv("CI") == "true" {
		skip = tb.Fatalf
	}
	for _, b := range device.Backends() {
		if b.Name() != "opencl" {
			continue
		}
		info, err := b.Probe(context.Background())
		if err != nil || len(info.Devices) == 0 {
			skip("opencl: no device: %v", err)
		}
		return info.Devices[0]
	}
	skip("no opencl backend registered")
	return nil
}

func goldDeviceStream(t *testing.T, dev device.Device) {
	ctx := context.Background()
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, want := readGold(t, c)
			src := openGold(t, c, goldAllocator(t))
			s := offHeap[abi.DeviceArrayStream](t)
			err := stream.ExportReaderToDevice(ctx, src, dev, s)
			src.Release()
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			if s.DeviceType != dev.Type() {
				t.Errorf("exported stream's device_type = %s, want %s", s.DeviceType, dev.Type())
			}
			r, err := stream.ImportDeviceStream(s)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			defer r.Release()
			if r.DeviceType() != dev.Type() {
				t.Errorf("DeviceType() = %s, want %s", r.DeviceType(), dev.Type())
			}
			for _, d := range schemaDiffs(schema, r.Schema()) {
				t.Errorf("stream schema: %s", d)
			}
			n := 0
			for rec, err := range r.HostRecords(ctx) {
				if err != nil {
					t.Fatalf("after %d batches: %v", n, err)
				}
				if n < len(want) {
					checkBatch(t, n, want[n], rec)
				}
				rec.Release() // HostRecords hands each copy to the caller
				n++
			}
			if n != len(want) {
				t.Errorf("got %d batches, want %d", n, len(want))
			}
		})
	}
}
