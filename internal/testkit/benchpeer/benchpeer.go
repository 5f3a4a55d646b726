// Package benchpeer drives testdata/c/bench_peer.c, the plain C producer and
// consumer of the C-path benchmarks (import from C, export to C, a C stream),
// which measure cdevice and arrow-go's cgo arrow/cdata against the same C
// code in the same run. The C side knows nothing of either, so no identity
// short-circuit applies. Only tests and benchmarks import it.
//
// A Template is one batch, exported once by cdevice and deep-copied by C
// (structs only: the clones point at the export's buffers, which stay alive
// until the test ends). Each Clone is a fresh ArrowArray and ArrowSchema
// tree whose release frees only the clone's structs. CloneRelease,
// CloneReleaseArrays and Walk do the harness's work alone, so that a
// Meter can report a benchmark's time and allocations without it.
package benchpeer

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// Peer is the loaded C library.
type Peer struct {
	templateNew, templateFree, templateNodes      uintptr
	cloneBatch, cloneRelease, cloneReleaseArrays  uintptr
	streamNew, walkRelease, walkTemplate, counter uintptr
}

// Load compiles and loads testdata/c/bench_peer.c (once per process; the
// test is skipped without gcc outside CI).
func Load(tb testing.TB) *Peer {
	tb.Helper()
	lib := ctest.Library(tb, "bench_peer")
	p := &Peer{}
	for _, s := range []struct {
		name string
		fn   *uintptr
	}{
		{"bp_template_new", &p.templateNew},
		{"bp_template_free", &p.templateFree},
		{"bp_template_nodes", &p.templateNodes},
		{"bp_clone_batch", &p.cloneBatch},
		{"bp_clone_release", &p.cloneRelease},
		{"bp_clone_release_arrays", &p.cloneReleaseArrays},
		{"bp_stream_new", &p.streamNew},
		{"bp_walk_release", &p.walkRelease},
		{"bp_walk_template", &p.walkTemplate},
		{"bp_counter", &p.counter},
	} {
		fn, err := lib.Symbol(s.name)
		if err != nil {
			tb.Fatal(err)
		}
		*s.fn = fn
	}
	return p
}

// Counters are bench_peer.c's counters (bp_counter), in its order.
type Counters struct {
	Clones, ClonesFreed   int64 // array or schema trees made; freed
	Nodes, NodesReleased  int64 // their nodes; node releases that ran
	DoubleReleases        int64 // releases of a node already released
	Streams, StreamsFreed int64 // streams made; released
}

// Counters reads the C side's counters.
func (p *Peer) Counters() Counters {
	c := func(i uintptr) int64 { return int64(int(ffi.Call1(p.counter, i))) }
	return Counters{
		Clones: c(0), ClonesFreed: c(1), Nodes: c(2), NodesReleased: c(3),
		DoubleReleases: c(4), Streams: c(5), StreamsFreed: c(6),
	}
}

// CheckReleased fails tb unless, since before, exactly clones trees and
// streams streams were made and every one of them, with every node, was
// released exactly once.
func (p *Peer) CheckReleased(tb testing.TB, before Counters, clones, streams int64) {
	tb.Helper()
	now := p.Counters()
	d := Counters{
		Clones: now.Clones - before.Clones, ClonesFreed: now.ClonesFreed - before.ClonesFreed,
		Nodes: now.Nodes - before.Nodes, NodesReleased: now.NodesReleased - before.NodesReleased,
		DoubleReleases: now.DoubleReleases - before.DoubleReleases,
		Streams:        now.Streams - before.Streams, StreamsFreed: now.StreamsFreed - before.StreamsFreed,
	}
	if d.Clones != clones || d.ClonesFreed != clones || d.NodesReleased != d.Nodes ||
		d.DoubleReleases != 0 || d.Streams != streams || d.StreamsFreed != streams {
		tb.Fatalf("C side: want %d clones and %d streams made and each released once, got %+v", clones, streams, d)
	}
}

// Template is one batch, deep-copied into C.
type Template struct {
	p *Peer
	h uintptr
	// ArrayNodes and SchemaNodes count the nodes of the batch's trees,
	// dictionaries included, as the C side found them.
	ArrayNodes, SchemaNodes int
}

// Template exports rec with cdevice and has C deep-copy the structs; the
// export and the copy last until tb ends.
func (p *Peer) Template(tb testing.TB, rec arrow.RecordBatch) *Template {
	tb.Helper()
	arr, sch := cdevice.New[abi.Array](), cdevice.New[abi.Schema]()
	if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
		cdevice.Free(arr)
		cdevice.Free(sch)
		tb.Fatal(err)
	}
	h := ffi.Call(p.templateNew, uintptr(unsafe.Pointer(arr)), uintptr(unsafe.Pointer(sch)))
	tb.Cleanup(func() {
		ffi.Call1(p.templateFree, h)
		cdevice.ReleaseArray(arr)
		cdevice.ReleaseSchema(sch)
		cdevice.Free(arr)
		cdevice.Free(sch)
	})
	if h == 0 {
		tb.Fatal("bp_template_new failed")
	}
	t := &Template{
		p: p, h: h,
		ArrayNodes:  int(ffi.Call(p.templateNodes, h, 0)),
		SchemaNodes: int(ffi.Call(p.templateNodes, h, 1)),
	}
	want := BatchNodes(rec.Schema())
	if t.ArrayNodes != want || t.SchemaNodes != want {
		tb.Fatalf("the C template has %d array and %d schema nodes, want %d", t.ArrayNodes, t.SchemaNodes, want)
	}
	return t
}

// Clone moves a fresh clone of the batch into arr and sch (C heap structs).
func (t *Template) Clone(arr *abi.Array, sch *abi.Schema) error {
	if rc := int32(ffi.Call(t.p.cloneBatch, t.h, uintptr(unsafe.Pointer(arr)), uintptr(unsafe.Pointer(sch)))); rc != 0 {
		return fmt.Errorf("bp_clone_batch = %d", rc)
	}
	return nil
}

// CloneRelease clones the batch and releases the clone, all in C, n times,
// one foreign call each: what an iteration that calls Clone and has the
// importer release the clone pays for the producer.
func (t *Template) CloneRelease(n int) error {
	for range n {
		if rc := int32(ffi.Call1(t.p.cloneRelease, t.h)); rc != 0 {
			return fmt.Errorf("bp_clone_release = %d", rc)
		}
	}
	return nil
}

// CloneReleaseArrays clones the batch's array and releases it, n times in one
// foreign call: the producer's own work for n batches of a Stream.
func (t *Template) CloneReleaseArrays(n int) error {
	if rc := int32(ffi.Call(t.p.cloneReleaseArrays, t.h, uintptr(n))); rc != 0 {
		return fmt.Errorf("bp_clone_release_arrays = %d", rc)
	}
	return nil
}

// Stream makes in out (a C heap struct) an ArrowArrayStream whose get_schema
// hands out a clone of the schema and whose get_next hands out batches clones
// of the array, then the end of the stream.
func (t *Template) Stream(out *abi.ArrayStream, batches int) error {
	if rc := int32(ffi.Call(t.p.streamNew, t.h, uintptr(batches), uintptr(unsafe.Pointer(out)))); rc != 0 {
		return fmt.Errorf("bp_stream_new = %d", rc)
	}
	return nil
}

// WalkRelease has C read every node of an exported batch (every buffer
// pointer, child and dictionary, the format and name strings) and release
// the array and the schema.
func (p *Peer) WalkRelease(arr *abi.Array, sch *abi.Schema) error {
	if rc := int32(ffi.Call(p.walkRelease, uintptr(unsafe.Pointer(arr)), uintptr(unsafe.Pointer(sch)))); rc != 0 {
		return fmt.Errorf("bp_walk_release = %d (a struct came released)", rc)
	}
	return nil
}

// Walk has C read the template's trees n times, one foreign call each, as
// WalkRelease reads an export, releasing nothing: what an iteration that
// calls WalkRelease pays for the consumer.
func (t *Template) Walk(n int) error {
	for range n {
		ffi.Call1(t.p.walkTemplate, t.h)
	}
	return nil
}

// LastWalk is what the last WalkRelease counted: array and schema nodes.
func (p *Peer) LastWalk() (arrayNodes, schemaNodes int) {
	return int(ffi.Call1(p.counter, 7)), int(ffi.Call1(p.counter, 8))
}

// BatchNodes is the number of nodes of the ArrowArray (and of the
// ArrowSchema) of a record batch of schema sc: the root struct, every child,
// every dictionary.
func BatchNodes(sc *arrow.Schema) int {
	n := 1
	for _, f := range sc.Fields() {
		n += typeNodes(f.Type)
	}
	return n
}

func typeNodes(dt arrow.DataType) int {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return 1 + typeNodes(t.ValueType)
	case arrow.NestedType:
		n := 1
		for _, f := range t.Fields() {
			n += typeNodes(f.Type)
		}
		return n
	}
	return 1
}

// A Meter counts a benchmark loop's allocations, so that Report can take
// the harness's share out of them.
type Meter struct {
	b      *testing.B
	before runtime.MemStats
}

// StartMeter starts a Meter; call it right before the b.Loop loop.
func StartMeter(b *testing.B) *Meter {
	m := &Meter{b: b}
	runtime.ReadMemStats(&m.before)
	return m
}

// Report reports, for a b.Loop loop that has just ended after ops
// iterations of perOp units each (1 "op", or the batches of a stream), what
// the harness costs and what is left of the loop without it, per unit:
//
//   - <name>-ns/<unit>: the time of overhead(ops), run now (the benchmark's
//     timer is stopped), which does the harness's work of ops iterations:
//     the producer's clone and release, or the consumer's walk, with the
//     same foreign calls as the loop;
//   - net-ns/<unit>: the loop's time less that;
//   - net-allocs/<unit> and net-B/<unit>: the loop's Go allocations less
//     overhead's (each foreign call through purego allocates).
func (m *Meter) Report(ops, perOp int, unit, name string, overhead func(ops int) error) {
	b := m.b
	b.Helper()
	var loop, o0, o1 runtime.MemStats
	runtime.ReadMemStats(&loop)
	total := b.Elapsed()
	if ops == 0 {
		return
	}
	runtime.ReadMemStats(&o0)
	start := time.Now()
	if err := overhead(ops); err != nil {
		b.Fatal(err)
	}
	over := time.Since(start)
	runtime.ReadMemStats(&o1)
	n := float64(ops) * float64(perOp)
	allocs := float64(loop.Mallocs-m.before.Mallocs) - float64(o1.Mallocs-o0.Mallocs)
	bytes := float64(loop.TotalAlloc-m.before.TotalAlloc) - float64(o1.TotalAlloc-o0.TotalAlloc)
	b.ReportMetric(float64(over.Nanoseconds())/n, name+"-ns/"+unit)
	b.ReportMetric(float64((total-over).Nanoseconds())/n, "net-ns/"+unit)
	b.ReportMetric(allocs/n, "net-allocs/"+unit)
	b.ReportMetric(bytes/n, "net-B/"+unit)
}
