package cdevice_test

// The import's slab (import_slab.go): the per-node objects of one batch
// share a few backing arrays, so every release order, every retained slice
// and every append by arrow-go must behave as with objects of their own.

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/benchpeer"
)

// importFromC imports a fresh C clone of tpl's batch.
func importFromC(t *testing.T, tpl *benchpeer.Template) arrow.RecordBatch {
	t.Helper()
	arr, sch := offHeap[abi.Array](t), offHeap[abi.Schema](t)
	if err := tpl.Clone(arr, sch); err != nil {
		t.Fatal(err)
	}
	got, err := cdevice.ImportRecordBatch(arr, sch)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return got
}

// Columns of a batch imported from C, and slices of them, released in many
// orders after the batch itself, stay equal to the source until each is
// released; the producer's tree is released once, with the last of them.
func TestImportSlabReleaseOrders(t *testing.T) {
	p := benchpeer.Load(t)
	rec := wideBatch(t)
	tpl := p.Template(t, rec)
	n := int(rec.NumCols())

	forward := make([]int, n)
	for i := range forward {
		forward[i] = i
	}
	orders := [][]int{forward, slices.Clone(forward)}
	slices.Reverse(orders[1])
	rng := rand.New(rand.NewPCG(16, 1))
	for range 6 {
		o := slices.Clone(forward)
		rng.Shuffle(n, func(i, j int) { o[i], o[j] = o[j], o[i] })
		orders = append(orders, o)
	}

	for k, order := range orders {
		before := p.Counters()
		freed := func() int64 { return p.Counters().ClonesFreed - before.ClonesFreed }
		got := importFromC(t, tpl)
		if !array.RecordEqual(rec, got) {
			t.Fatalf("order %d: the import differs from the source", k)
		}
		cols := make([]arrow.Array, n)
		var sliced []int // columns with a slice that outlives them
		var slcs []arrow.Array
		for i := range n {
			cols[i] = got.Column(i)
			cols[i].Retain()
			if (i+k)%2 == 0 && cols[i].Len() >= 3 {
				sliced = append(sliced, i)
				slcs = append(slcs, array.NewSlice(cols[i], 1, 3))
			}
		}
		got.Release()
		runtime.GC()
		check := func(when string) {
			t.Helper()
			for i, c := range cols {
				if c != nil && !array.Equal(c, rec.Column(i)) {
					t.Fatalf("order %d, %s: column %d differs from the source", k, when, i)
				}
			}
			for j, s := range slcs {
				want := array.NewSlice(rec.Column(sliced[j]), 1, 3)
				eq := array.Equal(s, want)
				want.Release()
				if !eq {
					t.Fatalf("order %d, %s: the slice of column %d differs from the source", k, when, sliced[j])
				}
			}
			if f := freed(); f != 1 { // the schema's clone only
				t.Fatalf("order %d, %s: %d C trees freed, want 1 (the schema)", k, when, f)
			}
		}
		check("after the batch's release")
		for _, i := range order {
			cols[i].Release()
			cols[i] = nil
			runtime.GC()
			check("after releasing column " + rec.ColumnName(i))
		}
		for j := len(slcs) - 1; j >= 0; j-- {
			if j == 0 {
				slcs[0].Release()
				break
			}
			s := slcs[j]
			slcs = slcs[:j]
			s.Release()
			check("after releasing a slice")
		}
		if f := freed(); f != 2 {
			t.Fatalf("order %d: %d C trees freed after the last release, want 2", k, f)
		}
		p.CheckReleased(t, before, 2, 0)
	}
}

// Every node's buffers and children are slices of capacity their length:
// an append to one (arrow-go's, or a user's) cannot write into another's.
func TestImportSlabAppendIsolated(t *testing.T) {
	p := benchpeer.Load(t)
	rec := wideBatch(t)
	tpl := p.Template(t, rec)
	before := p.Counters()
	got := importFromC(t, tpl)

	var nodes []arrow.ArrayData
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		nodes = append(nodes, d)
		for _, c := range d.Children() {
			walk(c)
		}
		if d.DataType().ID() == arrow.DICTIONARY {
			walk(d.Dictionary())
		}
	}
	for _, c := range got.Columns() {
		walk(c.Data())
	}
	type snap struct {
		bufs []*memory.Buffer
		kids []arrow.ArrayData
	}
	take := func() []snap {
		s := make([]snap, len(nodes))
		for i, d := range nodes {
			s[i] = snap{slices.Clone(d.Buffers()), slices.Clone(d.Children())}
		}
		return s
	}
	was := take()
	for i, d := range nodes {
		if b := d.Buffers(); cap(b) != len(b) {
			t.Errorf("node %d (%s): buffers have capacity %d, length %d", i, d.DataType(), cap(b), len(b))
		}
		if c := d.Children(); cap(c) != len(c) {
			t.Errorf("node %d (%s): children have capacity %d, length %d", i, d.DataType(), cap(c), len(c))
		}
		// What an append would write past the end, were there room.
		_ = append(d.Buffers(), memory.NewBufferBytes([]byte("x")))
		_ = append(d.Children(), array.NewData(arrow.Null, 0, nil, nil, 0, 0))
	}
	now := take()
	for i := range nodes {
		if !slices.Equal(was[i].bufs, now[i].bufs) || !slices.Equal(was[i].kids, now[i].kids) {
			t.Errorf("node %d (%s): an append to another node changed it", i, nodes[i].DataType())
		}
	}
	if !array.RecordEqual(rec, got) {
		t.Error("the import differs from the source after the appends")
	}
	got.Release()
	p.CheckReleased(t, before, 2, 0)
}

// Batches whose objects outnumber what their types predict (a bitmap in a
// non-nullable column, views with several variadic buffers) and batches
// small enough for the inline slab import as the source and release once.
func TestImportSlabOverflow(t *testing.T) {
	p := benchpeer.Load(t)
	mem := memory.NewGoAllocator()

	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	vb := array.NewStringViewBuilder(mem)
	defer vb.Release()
	long := strings.Repeat("v", 5000)
	for i := range 40 {
		if i%3 == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int64(i))
		}
		vb.Append(long + string(rune('a'+i%26))) // ~200 kB: several data buffers
	}
	ints, views := ib.NewArray(), vb.NewArray()
	defer ints.Release()
	defer views.Release()
	if nv := len(views.Data().Buffers()) - 2; nv < 3 {
		t.Fatalf("the view column has %d data buffers, want several", nv)
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i := range 6 { // non-nullable, all with a bitmap
		fields = append(fields, arrow.Field{Name: "i" + string(rune('0'+i)), Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: "v" + string(rune('0'+i)), Type: arrow.BinaryTypes.StringView})
		cols = append(cols, ints, views)
	}
	big := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(ints.Len()))
	defer big.Release()
	small := array.NewRecordBatch(arrow.NewSchema(fields[1:2], nil), cols[1:2], int64(ints.Len()))
	defer small.Release()

	for _, rec := range []arrow.RecordBatch{big, small, tallBatch(t, 10)} {
		tpl := p.Template(t, rec)
		before := p.Counters()
		got := importFromC(t, tpl)
		if !array.RecordEqual(rec, got) {
			t.Errorf("%s: the import differs from the source", rec.Schema())
		}
		got.Release()
		p.CheckReleased(t, before, 2, 0)
	}
}
