package testsupport

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
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// Testdata returns the path of the module's testdata file or directory rel.
func Testdata(tb testing.TB, rel string) string {
	tb.Helper()
	root, err := ctest.ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(root, "testdata", rel)
}

// GoldDir holds Arrow's integration gold files (see its README.md).
func GoldDir(tb testing.TB) string {
	return Testdata(tb, "arrow-integration/cpp-21.0.0")
}

// GoldCases lists the gold cases: every *.stream file's name without its
// extension (no-batch and zero-length cases included). Each case also has a
// .arrow_file with the same data.
func GoldCases(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(GoldDir(tb), "*.stream"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no gold files in %s", GoldDir(tb))
	}
	cases := make([]string, len(files))
	for i, f := range files {
		cases[i] = strings.TrimSuffix(filepath.Base(f), ".stream")
	}
	sort.Strings(cases)
	return cases
}

// CheckedAllocator fails the test if any of its memory is still held when
// the test ends (an export never released).
func CheckedAllocator(tb testing.TB) memory.Allocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	tb.Cleanup(func() { mem.AssertSize(tb, 0) })
	return mem
}

// OpenGoldStream opens a case's .stream file as an ipc.Reader reading into
// mem. The caller releases it.
func OpenGoldStream(tb testing.TB, c string, mem memory.Allocator) *ipc.Reader {
	tb.Helper()
	f, err := os.Open(filepath.Join(GoldDir(tb), c+".stream"))
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

// ReadGold reads the gold file name (a case plus ".stream" or
// ".arrow_file"). The batches stay retained until the test ends; then they
// are released and the test fails if any of their memory is still held.
func ReadGold(tb testing.TB, name string) (*arrow.Schema, []arrow.RecordBatch) {
	tb.Helper()
	mem := CheckedAllocator(tb) // its check runs after the release below
	var recs []arrow.RecordBatch
	tb.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	switch c, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name); ext {
	case ".stream":
		r := OpenGoldStream(tb, c, mem)
		defer r.Release()
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		if err := r.Err(); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		return r.Schema(), recs
	case ".arrow_file":
		f, err := os.Open(filepath.Join(GoldDir(tb), name))
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		defer r.Close()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordBatchAt(i)
			if err != nil {
				tb.Fatalf("%s: batch %d: %v", name, i, err)
			}
			recs = append(recs, rec)
		}
		return r.Schema(), recs
	}
	tb.Fatalf("ReadGold(%q): want a .stream or .arrow_file name", name)
	return nil, nil
}

// SchemaDiffs compares two schemas in full: Equal, the schema's metadata,
// and the metadata of every field at every depth (which Equal does not look
// at everywhere). One line per difference, naming the field's path.
func SchemaDiffs(want, got *arrow.Schema) []string {
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
	return append(d, FieldsDiffs("", want.Fields(), got.Fields())...)
}

// FieldsDiffs compares the metadata of fields and of every field nested in
// their types, recursively.
func FieldsDiffs(path string, want, got []arrow.Field) []string {
	if len(want) != len(got) {
		return []string{fmt.Sprintf("%s: want %d fields, got %d", path, len(want), len(got))}
	}
	var d []string
	for i := range want {
		p := path + "/" + want[i].Name
		if !want[i].Metadata.Equal(got[i].Metadata) {
			d = append(d, fmt.Sprintf("%s: metadata: want %v, got %v", p, want[i].Metadata, got[i].Metadata))
		}
		d = append(d, FieldsDiffs(p, ChildFields(want[i].Type), ChildFields(got[i].Type))...)
	}
	return d
}

// ChildFields are the fields nested in dt, looking through extension and
// dictionary types.
func ChildFields(dt arrow.DataType) []arrow.Field {
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

// CheckBatch compares one imported batch with the expected one.
func CheckBatch(tb testing.TB, i int, want, got arrow.RecordBatch) {
	tb.Helper()
	for _, d := range SchemaDiffs(want.Schema(), got.Schema()) {
		tb.Errorf("batch %d: %s", i, d)
	}
	if !array.RecordEqual(want, got) {
		tb.Errorf("batch %d: values differ:\nwant %v\ngot  %v", i, want, got)
	}
}

// OffHeap returns a zeroed T in C heap memory (cdevice.New), freed when the
// test ends: structs that a producer fills must not be Go memory. A test
// that skipped or failed may have left one live (an export made before a
// missing C compiler skipped the test): it is released first, so the
// binary's leak check reports the leaks of passing tests only.
func OffHeap[T cdevice.Struct](tb testing.TB) *T {
	p := cdevice.New[T]()
	tb.Cleanup(func() {
		if tb.Skipped() || tb.Failed() {
			releaseLive(p)
		}
		cdevice.Free(p)
	})
	return p
}

// releaseLive releases the struct at p if it is live.
func releaseLive(p any) {
	switch p := p.(type) {
	case *abi.Schema:
		cdevice.ReleaseSchema(p)
	case *abi.Array:
		cdevice.ReleaseArray(p)
	case *abi.DeviceArray:
		cdevice.ReleaseDeviceArray(p)
	case *abi.ArrayStream:
		cdevice.ReleaseArrayStream(p)
	case *abi.DeviceArrayStream:
		cdevice.ReleaseDeviceArrayStream(p)
	case *abi.AsyncDeviceStreamHandler:
		cdevice.ReleaseAsyncHandler(p)
	}
}

// ForEachIdentity runs f with identity imports off (the path a C
// producer's structs take) and on (our own exports come back as themselves).
func ForEachIdentity(t *testing.T, f func(t *testing.T)) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "full", true: "identity"}[on]
		t.Run(name, func(t *testing.T) {
			defer identity.Set(identity.Set(on))
			f(t)
		})
	}
}
