package cdevice

// The per-node objects of one host import (array.Data, memory.Buffer, the
// buffer and child slices that arrow-go's Data holds), carved out of a few
// backing arrays sized from the type before the walk, instead of allocated
// one by one: an import of n nodes costs a handful of allocations, not ~4n.

import (
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// slabCounts is how many objects of each kind an import takes, as counted
// from its type by add. Only bufs is a guess (a validity bitmap is counted
// for nullable fields only); the others are exact except for views (each
// variadic buffer beyond the first is one more) and trees deeper than
// maxDepth (which fail). An import that needs more takes it from further
// chunks.
type slabCounts struct {
	datas int // array.Data: one per node, dictionaries included
	ptrs  int // *memory.Buffer slots: arrow-go's buffers, nil ones included
	bufs  int // memory.Buffer: the non-nil ones
	kids  int // arrow.ArrayData slots: children, and the columns of a batch
}

// add counts a node of type dt at depth, nullable or not, and everything
// below it.
func (c *slabCounts) add(dt arrow.DataType, nullable bool, depth int) {
	if depth > maxDepth {
		return
	}
	dt = storageType(dt)
	c.datas++
	switch id := dt.ID(); id {
	case arrow.NULL, arrow.RUN_END_ENCODED:
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		c.ptrs += 2 // arrow-go's nil validity, type ids
		c.bufs++
		if id == arrow.DENSE_UNION {
			c.ptrs++ // offsets
			c.bufs++
		}
	default:
		n, _ := cBuffersOf(dt)
		switch id {
		case arrow.BINARY_VIEW, arrow.STRING_VIEW:
			n = 3 // validity, views, one variadic buffer
		case arrow.DICTIONARY:
			c.add(dt.(*arrow.DictionaryType).ValueType, true, depth+1)
		}
		c.ptrs += n
		c.bufs += n - 1 // all but the validity bitmap,
		if nullable {
			c.bufs++ // which only a nullable field is likely to have
		}
	}
	nc := numChildFields(dt)
	c.kids += nc
	if ut, ok := dt.(arrow.UnionType); ok {
		for _, f := range ut.Fields() { // one copy of the fields, not childField's one per child
			c.add(f.Type, f.Nullable, depth+1)
		}
		return
	}
	for i := range nc {
		f := childField(dt, i)
		c.add(f.Type, f.Nullable, depth+1)
	}
}

// batchCounts returns the counts of an import of a record batch of schema
// sc. The last schema's are kept (a stream's batches, and batches whose
// schemas the schema cache imports as one, share theirs).
func batchCounts(sc *arrow.Schema) slabCounts {
	if last := lastBatchCounts.Load(); last != nil && last.sc == sc {
		return last.c
	}
	c := slabCounts{kids: sc.NumFields()}
	for i := range sc.NumFields() {
		f := sc.Field(i) // Fields() would copy them
		c.add(f.Type, f.Nullable, 1)
	}
	lastBatchCounts.Store(&schemaCounts{sc: sc, c: c})
	return c
}

type schemaCounts struct {
	sc *arrow.Schema
	c  slabCounts
}

var lastBatchCounts atomic.Pointer[schemaCounts]

// importSlab hands out the not yet used part of each backing array. Every
// slice it hands out has its capacity cut to its length, so an append by
// arrow-go (or a user) to one node's buffers or children copies instead of
// writing into its neighbour's. The backing arrays stay reachable while any
// object in them is; they hold nothing C can see (C never gets a Go pointer
// from an import).
type importSlab struct {
	datas []array.Data
	bufs  []memory.Buffer
	ptrs  []*memory.Buffer
	kids  []arrow.ArrayData
}

// smallSlab is the backing arrays of an import of one flat column (a
// batch's, or an array's), in one allocation.
type smallSlab struct {
	datas [1]array.Data
	bufs  [3]memory.Buffer
	ptrs  [3]*memory.Buffer
	kids  [1]arrow.ArrayData
}

// newImportSlab returns a slab that holds c: in a smallSlab when c fits
// one, else in one allocation of each kind. It is apart from the
// arrayImport, which C reads (its release gets a pointer to the moved
// root) and which must therefore hold no Go pointer.
func newImportSlab(c slabCounts) importSlab {
	var ss *smallSlab
	if c.datas <= len(ss.datas) && c.bufs <= len(ss.bufs) && c.ptrs <= len(ss.ptrs) && c.kids <= len(ss.kids) {
		ss = new(smallSlab)
		return importSlab{datas: ss.datas[:], bufs: ss.bufs[:], ptrs: ss.ptrs[:], kids: ss.kids[:]}
	}
	return importSlab{
		datas: make([]array.Data, c.datas),
		bufs:  make([]memory.Buffer, c.bufs),
		ptrs:  make([]*memory.Buffer, c.ptrs),
		kids:  make([]arrow.ArrayData, c.kids),
	}
}

// take returns the next n elements of *from as a slice of capacity n (nil
// for none), growing *from (by at least chunk) when it has fewer left: the
// counts can fall short (views with several variadic buffers).
func take[T any](from *[]T, n, chunk int) []T {
	if n == 0 {
		return nil
	}
	if len(*from) < n {
		*from = make([]T, max(n, chunk))
	}
	s := (*from)[:n:n]
	*from = (*from)[n:]
	return s
}

// data returns a zero array.Data for one node.
func (s *importSlab) data() *array.Data { return &take(&s.datas, 1, 4)[0] }

// bufferSlice returns n nil buffer slots for one node.
func (s *importSlab) bufferSlice(n int) []*memory.Buffer { return take(&s.ptrs, n, 8) }

// children returns n nil child slots for one node.
func (s *importSlab) children(n int) []arrow.ArrayData { return take(&s.kids, n, 4) }

// buffer returns a buffer over b with allocator mem (nil: none), in the
// state memory.NewBufferWithAllocator (or, without an allocator,
// memory.NewBufferBytes) leaves it: memory.Buffer can only be made by its
// constructors, which are inlined, so the one they build stays on the stack
// and is copied into the slab before anything else sees it.
func (s *importSlab) buffer(b []byte, mem memory.Allocator) *memory.Buffer {
	dst := take(&s.bufs, 1, 8)
	if mem == nil {
		copy(dst, unsafe.Slice(memory.NewBufferBytes(b), 1))
	} else {
		copy(dst, unsafe.Slice(memory.NewBufferWithAllocator(b, mem), 1))
	}
	return &dst[0]
}

// newData returns a node's array.Data holding bufs, children and dict, in
// the state array.NewData (then SetDictionary) leaves it: one reference,
// each buffer and child retained.
func (s *importSlab) newData(dt arrow.DataType, length int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls, offset int, dict *array.Data) *array.Data {
	d := s.data()
	d.Reset(dt, length, bufs, children, nulls, offset) // on a zero Data: sets and retains, releases nothing
	d.Retain()                                         // the reference NewData starts with
	if dict != nil {
		d.SetDictionary(dict)
	}
	return d
}
