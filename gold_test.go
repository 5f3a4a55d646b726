package cdevice_test

import (
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
)

// goldDir holds Arrow's integration gold files (see its README.md).
const goldDir = "testdata/arrow-integration/cpp-21.0.0"

// goldFormats are the two IPC encodings every gold case comes in.
var goldFormats = []string{".stream", ".arrow_file"}

// goldCases lists the gold cases: the name of every *.stream file in goldDir
// without its extension (generated_primitive, generated_map, ...). Each case
// also has a .arrow_file with the same data.
func goldCases(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldDir, "*.stream"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no gold files in %s", goldDir)
	}
	cases := make([]string, len(files))
	for i, f := range files {
		cases[i] = strings.TrimSuffix(filepath.Base(f), ".stream")
	}
	sort.Strings(cases)
	return cases
}

// readGold reads the gold file name (a case name plus ".stream" or
// ".arrow_file") from goldDir. The batches stay retained until the test ends;
// then they are released and the test fails if any of their memory is still
// held (which catches an export that was never released).
func readGold(t testing.TB, name string) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // runs after the release below

	f, err := os.Open(filepath.Join(goldDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var (
		schema *arrow.Schema
		recs   []arrow.RecordBatch
	)
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	switch filepath.Ext(name) {
	case ".stream":
		r, err := ipc.NewReader(f, ipc.WithAllocator(mem))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer r.Release()
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		schema = r.Schema()
	case ".arrow_file":
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer r.Close()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordBatchAt(i)
			if err != nil {
				t.Fatalf("%s: batch %d: %v", name, i, err)
			}
			recs = append(recs, rec)
		}
		schema = r.Schema()
	default:
		t.Fatalf("readGold(%q): want a .stream or .arrow_file name", name)
	}
	return schema, recs
}

// offHeap returns a zeroed T in C heap memory (cdevice.New), freed when the
// test ends. Structs that a producer fills and C may keep must not be Go memory.
func offHeap[T cdevice.Struct](tb testing.TB) *T {
	p := cdevice.New[T]()
	tb.Cleanup(func() { cdevice.Free(p) })
	return p
}

// roundTrip exports rec into off-heap structs and imports it back, failing
// the test on any error; the structs are returned for inspection.
func roundTrip(tb testing.TB, rec arrow.RecordBatch) (arrow.RecordBatch, *abi.Array, *abi.Schema) {
	tb.Helper()
	arr, sch := offHeap[abi.Array](tb), offHeap[abi.Schema](tb)
	if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
		tb.Fatal(err)
	}
	got, err := cdevice.ImportRecordBatch(arr, sch)
	if err != nil {
		tb.Fatal(err)
	}
	return got, arr, sch
}

// schemaDiffs compares two schemas in full: arrow.Schema.Equal (names, types,
// nullability, top-level field metadata) plus the schema's own metadata and
// the metadata of every field at every depth, which Equal does not look at
// everywhere. It returns one line per difference, naming the field's path.
func schemaDiffs(want, got *arrow.Schema) []string {
	var d []string
	if !want.Equal(got) {
		d = append(d, fmt.Sprintf("schemas differ:\nwant %s\ngot  %s", want, got))
	}
	if !want.Metadata().Equal(got.Metadata()) {
		d = append(d, fmt.Sprintf("schema metadata: want %v, got %v", want.Metadata(), got.Metadata()))
	}
	wf, gf := want.Fields(), got.Fields()
	if len(wf) != len(gf) {
		return append(d, fmt.Sprintf("schema: want %d fields, got %d", len(wf), len(gf)))
	}
	for i := range wf {
		d = append(d, fieldMetadataDiffs(wf[i].Name, wf[i], gf[i])...)
	}
	return d
}

// fieldMetadataDiffs compares the metadata of want and got and of all the
// fields nested in their types (children, list items, map entries, union
// members, run-end encoded children, dictionary values, extension storage).
func fieldMetadataDiffs(path string, want, got arrow.Field) []string {
	var d []string
	if !want.Metadata.Equal(got.Metadata) {
		d = append(d, fmt.Sprintf("%s: metadata: want %v, got %v", path, want.Metadata, got.Metadata))
	}
	wc, gc := childFields(want.Type), childFields(got.Type)
	if len(wc) != len(gc) {
		return append(d, fmt.Sprintf("%s: want %d child fields, got %d (%s vs %s)", path, len(wc), len(gc), want.Type, got.Type))
	}
	for i := range wc {
		d = append(d, fieldMetadataDiffs(path+"."+wc[i].Name, wc[i], gc[i])...)
	}
	return d
}

func childFields(dt arrow.DataType) []arrow.Field {
	for {
		switch t := dt.(type) {
		case arrow.ExtensionType:
			dt = t.StorageType()
			continue
		case *arrow.DictionaryType:
			dt = t.ValueType
			continue
		case arrow.NestedType:
			return t.Fields()
		}
		return nil
	}
}

func TestGoldRoundTrip(t *testing.T) {
	forEachGoldBatchFormat(t, func(t *testing.T, name string) {
		schema, recs := readGold(t, name)
		arr, sch := offHeap[abi.Array](t), offHeap[abi.Schema](t)
		for i, rec := range recs {
			if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
				t.Fatalf("batch %d: export: %v", i, err)
			}
			got, err := cdevice.ImportRecordBatch(arr, sch)
			if err != nil {
				t.Fatalf("batch %d: import: %v", i, err)
			}
			if !arr.Released() || !sch.Released() {
				t.Errorf("batch %d: the import did not move its input: array released=%v, schema released=%v", i, arr.Released(), sch.Released())
			}
			for _, d := range schemaDiffs(schema, got.Schema()) {
				t.Errorf("batch %d: %s", i, d)
			}
			if !array.RecordEqual(rec, got) {
				t.Errorf("batch %d: values differ:\nwant %v\ngot  %v", i, rec, got)
			}
			got.Release()
		}
	})
}

func TestGoldSchemaRoundTrip(t *testing.T) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, _ := readGold(t, c+".stream")
			sch := offHeap[abi.Schema](t)
			if err := cdevice.ExportSchema(schema, sch); err != nil {
				t.Fatalf("export: %v", err)
			}
			got, err := cdevice.ImportSchema(sch)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if !sch.Released() {
				t.Error("ImportSchema left the struct unreleased")
			}
			for _, d := range schemaDiffs(schema, got) {
				t.Error(d)
			}
		})
	}
}

// forEachGoldBatchFormat runs f in a subtest per gold case and IPC format,
// with the file name to hand to readGold.
func forEachGoldBatchFormat(t *testing.T, f func(t *testing.T, name string)) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			for _, format := range goldFormats {
				t.Run(strings.TrimPrefix(format, "."), func(t *testing.T) { f(t, c+format) })
			}
		})
	}
}
