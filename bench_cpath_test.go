package cdevice_test

// The C-path benchmarks: batches that come from, and go to, plain C
// (testdata/c/bench_peer.c through internal/benchpeer; the C side knows
// nothing of cdevice, so no identity short-circuit applies). Each has a twin
// through arrow-go's cgo arrow/cdata in bench_cpath_cgo_test.go, selected by
// the same regex, run against the same C functions:
//
//	CGO_ENABLED=1 go test -run XXX -bench 'CImport|CExport|CStream' -benchmem -count 5 . ./stream
//
// (.ci/bench-cpath runs that and prints the medians.) Without cgo only ours
// run.
//
// Import: C hands out a fresh clone of one batch's struct tree per iteration
// (new structs, the same buffers); the iteration imports it (array and
// schema) and releases the result, which releases the clone. clone-ns/op is
// the C clone and release alone, for as many iterations, measured right
// after the loop; net-ns/op is ns/op less clone-ns/op: the importer's own
// cost.
//
// Export: the iteration exports the batch into C heap structs and a C
// consumer walks the whole tree (every node, buffer pointer, child,
// dictionary, the format and name strings) and releases it. ns/op is all of
// it; walk-ns/op is the C walk alone; net-ns/op is ns/op less walk-ns/op:
// the export and its release callbacks.
//
// Every foreign call through purego allocates once in Go, the harness's
// (Clone, WalkRelease) included; net-allocs/op and net-B/op are allocs/op
// and B/op less the harness's share, measured with the clone-ns/op and
// walk-ns/op runs.

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/benchpeer"
)

// tallRows is the length of the Tall benchmarks' one int64 column.
const tallRows = 1_000_000

// importFunc imports a batch from C heap structs, as ImportRecordBatch does.
type importFunc func(arr *abi.Array, sch *abi.Schema) (arrow.RecordBatch, error)

// exportFunc exports a batch into C heap structs, as ExportRecordBatch does.
type exportFunc func(rec arrow.RecordBatch, arr *abi.Array, sch *abi.Schema) error

func ourImport(arr *abi.Array, sch *abi.Schema) (arrow.RecordBatch, error) {
	return cdevice.ImportRecordBatch(arr, sch)
}

func BenchmarkCImportWide(b *testing.B) { benchCImport(b, wideBatch(b), ourImport) }

func BenchmarkCImportTall(b *testing.B) { benchCImport(b, tallBatch(b, tallRows), ourImport) }

func BenchmarkCExportWide(b *testing.B) {
	benchCExport(b, wideBatch(b), cdevice.ExportRecordBatch)
}

func BenchmarkCExportTall(b *testing.B) {
	benchCExport(b, tallBatch(b, tallRows), cdevice.ExportRecordBatch)
}

// benchCImport measures imp importing clones of rec from C, after checking
// once that the import equals rec; at the end every clone must have been
// released exactly once.
func benchCImport(b *testing.B, rec arrow.RecordBatch, imp importFunc) {
	p := benchpeer.Load(b)
	tpl := p.Template(b, rec)
	arr, sch := offHeap[abi.Array](b), offHeap[abi.Schema](b)
	before := p.Counters()

	if err := tpl.Clone(arr, sch); err != nil {
		b.Fatal(err)
	}
	got, err := imp(arr, sch)
	if err != nil {
		b.Fatalf("import: %v", err)
	}
	if !arr.Released() || !sch.Released() {
		b.Fatalf("the import did not move its input: array released=%v, schema released=%v", arr.Released(), sch.Released())
	}
	for _, d := range schemaDiffs(rec.Schema(), got.Schema()) {
		b.Error(d)
	}
	if !array.RecordEqual(rec, got) {
		b.Error("the imported batch differs from the one exported")
	}
	got.Release()
	if b.Failed() {
		b.FailNow()
	}
	p.CheckReleased(b, before, 2, 0)

	b.ReportAllocs()
	n := 0
	m := benchpeer.StartMeter(b)
	for b.Loop() {
		if err := tpl.Clone(arr, sch); err != nil {
			b.Fatal(err)
		}
		got, err := imp(arr, sch)
		if err != nil {
			b.Fatal(err)
		}
		got.Release()
		n++
	}
	m.Report(n, 1, "op", "clone", tpl.CloneRelease)
	// Two trees (array, schema) per iteration, the check's and the
	// measurement's of the clone cost included.
	p.CheckReleased(b, before, int64(2*(1+2*n)), 0)
}

// benchCExport measures exp exporting rec to a C consumer that walks the
// whole tree and releases it, after checking once that the consumer saw
// every node and that its release reached the exporter.
func benchCExport(b *testing.B, rec arrow.RecordBatch, exp exportFunc) {
	p := benchpeer.Load(b)
	tpl := p.Template(b, rec) // for the walk alone
	arr, sch := offHeap[abi.Array](b), offHeap[abi.Schema](b)

	if err := exp(rec, arr, sch); err != nil {
		b.Fatalf("export: %v", err)
	}
	if err := p.WalkRelease(arr, sch); err != nil {
		b.Fatal(err)
	}
	want := benchpeer.BatchNodes(rec.Schema())
	if na, ns := p.LastWalk(); na != want || ns != want {
		b.Fatalf("the C consumer walked %d array and %d schema nodes, want %d", na, ns, want)
	}
	if !arr.Released() || !sch.Released() {
		b.Fatalf("the C consumer's release did not mark the structs released: array %v, schema %v", arr.Released(), sch.Released())
	}

	b.ReportAllocs()
	n := 0
	m := benchpeer.StartMeter(b)
	for b.Loop() {
		if err := exp(rec, arr, sch); err != nil {
			b.Fatal(err)
		}
		if err := p.WalkRelease(arr, sch); err != nil {
			b.Fatal(err)
		}
		n++
	}
	m.Report(n, 1, "op", "walk", tpl.Walk)
	if !arr.Released() || !sch.Released() {
		b.Fatal("the last export was not released")
	}
}

// The C-path benchmarks' harness: a clone imports as the batch it was made
// from, every clone is released once, and the work a Meter subtracts
// allocates as much in Go as the harness's share of a benchmark's loop, so
// that net-allocs/op and net-B/op are the importer's or exporter's alone.
func TestCPathBenchHarness(t *testing.T) {
	p := benchpeer.Load(t)
	rec := wideBatch(t)
	tpl := p.Template(t, rec)
	before := p.Counters()
	got := importFromC(t, tpl)
	if !array.RecordEqual(rec, got) {
		t.Error("the clone imports as another batch")
	}
	got.Release()
	p.CheckReleased(t, before, 2, 0)
	arr, sch := offHeap[abi.Array](t), offHeap[abi.Schema](t)

	// The harness's share of an import loop is Clone, of an export loop
	// WalkRelease (the clones' release is C's); CloneRelease and Walk stand
	// in for them, CloneReleaseArrays for a stream's Stream.
	allocs := func(f func() error) float64 {
		return testing.AllocsPerRun(100, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		})
	}
	harness := allocs(func() error {
		if err := tpl.Clone(arr, sch); err != nil {
			return err
		}
		return p.WalkRelease(arr, sch)
	})
	cloneRelease := allocs(func() error { return tpl.CloneRelease(1) })
	if walk := allocs(func() error { return tpl.Walk(1) }); harness != cloneRelease+walk {
		t.Errorf("Clone and WalkRelease allocate %v times, CloneRelease and Walk %v", harness, cloneRelease+walk)
	}
	if a := allocs(func() error { return tpl.CloneReleaseArrays(5) }); a != cloneRelease {
		t.Errorf("CloneReleaseArrays allocates %v times, CloneRelease %v", a, cloneRelease)
	}
	// AllocsPerRun runs its function once more than it counts.
	p.CheckReleased(t, before, 2+101*2+101*2+101*5, 0)
}

// BenchmarkArrowGoValuesWide is the floor under any import that returns
// arrow-go values: building the wide batch's arrow-go objects (a Data and
// buffers per node with arrow-go's own constructors, the arrays, the
// record) over memory that is already there, and releasing them; no C, no
// checks. Compare CImportWide and CStreamWide (per batch) with it.
func BenchmarkArrowGoValuesWide(b *testing.B) {
	rec := wideBatch(b)
	b.ReportAllocs()
	for b.Loop() {
		cols := make([]arrow.Array, rec.NumCols())
		for i, c := range rec.Columns() {
			d := rebuildData(c.Data())
			cols[i] = array.MakeFromData(d)
			d.Release()
		}
		r := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
		for _, c := range cols {
			c.Release()
		}
		r.Release()
	}
}

// rebuildData makes new arrow-go objects for d's tree over d's memory.
func rebuildData(d arrow.ArrayData) *array.Data {
	kids := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		kids[i] = rebuildData(c)
	}
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b != nil {
			bufs[i] = memory.NewBufferBytes(b.Bytes())
		}
	}
	nd := array.NewData(d.DataType(), d.Len(), bufs, kids, d.NullN(), d.Offset())
	for _, k := range kids {
		k.Release()
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		dd := rebuildData(dict)
		nd.SetDictionary(dd)
		dd.Release()
	}
	return nd
}
