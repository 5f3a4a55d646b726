package cdevice

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
)

// An export is the state behind every node of one exported tree of structs
// (an ArrowSchema or ArrowArray and all of its children and dictionaries).
// All nodes share one handle in private_data. The structs of the non-root
// nodes, their buffer and child pointer arrays and their strings live in one
// Go allocation (the slab) that is pinned, together with every Go data buffer
// C can reach, until the last node is released. Exports are pooled: a warm
// export allocates nothing but its slab.
type export struct {
	handle ffi.Handle
	leak   leak.Object
	pin    runtime.Pinner
	live   atomic.Int32 // nodes not yet released

	// source is what the tree describes: a *arrow.Schema, or an arrow.Array
	// or arrow.RecordBatch retained until the last release. With the root as
	// written, it lets an import of the untouched tree hand back source.
	source     any
	schemaRoot abi.Schema
	arrayRoot  abi.Array
}

// A plannedNode is everything fill writes for one ArrowSchema.
type plannedNode struct {
	format, name string
	md           []byte
	flags        int64
	children     int  // how many nodes of the plan are its children
	dictionary   bool // the next node is its dictionary's value type
}

var exportPool = sync.Pool{New: func() any { return new(export) }}

func newExport(kind leak.Kind) *export {
	e := exportPool.Get().(*export)
	e.leak = leak.Track(kind)
	return e
}

// start registers the export in the handle table once its nodes are counted.
func (e *export) start(nodes int) uintptr {
	e.live.Store(int32(nodes))
	e.handle = ffi.NewHandle(e)
	return uintptr(e.handle)
}

// releaseNode is called once for every node; the last one frees everything.
func (e *export) releaseNode() {
	if e.live.Add(-1) != 0 {
		return
	}
	e.pin.Unpin()
	e.dropSource()
	e.handle.Delete()
	e.handle = 0
	e.leak.Done()
	exportPool.Put(e)
}

func (e *export) dropSource() {
	if r, ok := e.source.(interface{ Release() }); ok {
		r.Release()
	}
	e.source = nil
}

// A slab is one pinned Go allocation carved into regions: C structs,
// pointer arrays, int64 arrays and bytes, each with its own cursor so no
// padding falls between items. It holds no Go pointers: the GC never scans it.
type slab struct {
	base                         unsafe.Pointer
	structs, ptrs, int64s, bytes uintptr // cursors: offsets from base
}

// newSlab sizes the regions for the given counts and pins the allocation.
func newSlab(pin *runtime.Pinner, structs int, structSize uintptr, ptrs, int64s, bytes int) slab {
	const ptr = unsafe.Sizeof(uintptr(0))
	round := func(n uintptr) uintptr { return (n + 7) &^ 7 }
	sizes := [4]uintptr{round(uintptr(structs) * structSize), round(uintptr(ptrs) * ptr), uintptr(int64s) * 8, uintptr(bytes)}
	total := sizes[0] + sizes[1] + sizes[2] + sizes[3]
	if total == 0 {
		return slab{}
	}
	mem := make([]uint64, (total+7)/8)
	pin.Pin(&mem[0])
	return slab{
		base:   unsafe.Pointer(&mem[0]),
		ptrs:   sizes[0],
		int64s: sizes[0] + sizes[1],
		bytes:  sizes[0] + sizes[1] + sizes[2],
	}
}

// take returns the next n bytes at cursor and advances it; nil for n == 0,
// which may sit at the very end of the allocation.
func (s *slab) take(cursor *uintptr, n uintptr) unsafe.Pointer {
	if n == 0 {
		return nil
	}
	p := unsafe.Add(s.base, *cursor)
	*cursor += n
	return p
}

func (s *slab) takePtrs(n int) []uintptr {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uintptr)(s.take(&s.ptrs, uintptr(n)*unsafe.Sizeof(uintptr(0)))), n)
}

// metadataBytes is the room a metadata blob takes in the bytes region: blobs
// go first, each padded to 4 so C may read their int32s aligned.
func metadataBytes(md []byte) int { return (len(md) + 3) &^ 3 }

// ---- ArrowSchema ----

// The release callbacks of everything exported here (set in init: their
// bodies refer back to them).
var schemaReleaseCB, arrayReleaseCB *ffi.Callback

func init() {
	schemaReleaseCB = ffi.NewCallback1("ArrowSchema.release", func(p uintptr) uintptr {
		releaseExportedSchema((*abi.Schema)(abi.Pointer(p)), nil)
		return 0
	})
	arrayReleaseCB = ffi.NewCallback1("ArrowArray.release", func(p uintptr) uintptr {
		releaseExportedArray((*abi.Array)(abi.Pointer(p)), nil)
		return 0
	})
}

// exportOf returns the export behind a private_data handle; parent, the
// export of the node being released above, saves the handle-table lookup
// for children (they share its handle).
func exportOf(privateData uintptr, parent *export) *export {
	if parent != nil && uintptr(parent.handle) == privateData {
		return parent
	}
	e, _ := ffi.Lookup[*export](privateData) // nil for garbage or another kind of handle
	return e
}

func releaseExportedSchema(s *abi.Schema, parent *export) {
	if s == nil || s.Release == 0 {
		if s != nil {
			leak.DoubleReleases.Add(1) // only a consumer calls a NULL release's saved pointer
		}
		return
	}
	e := exportOf(s.PrivateData, parent)
	for i := range s.NChildren {
		releaseSchemaIn(s.Child(int(i)), e)
	}
	releaseSchemaIn((*abi.Schema)(abi.Pointer(s.Dictionary)), e)
	*s = abi.Schema{} // no pointer into memory about to be unpinned survives
	if e != nil {
		e.releaseNode()
	}
}

// ExportSchema exports s into out as a struct-typed ArrowSchema whose
// children are the schema's fields and whose metadata is the schema's.
func ExportSchema(s *arrow.Schema, out *abi.Schema) error {
	if s == nil || out == nil {
		return invalidf("ExportSchema: nil schema or out")
	}
	plan, err := schemaPlanOf(s)
	if err != nil {
		return err
	}
	exportSchemaTree(plan, s, out)
	return nil
}

// ExportField exports f (name, type, nullability, metadata) into out.
func ExportField(f arrow.Field, out *abi.Schema) error {
	if out == nil || f.Type == nil {
		return invalidf("ExportField: nil out or type")
	}
	var plan schemaPlan
	if err := plan.add(fieldNode(f), 0); err != nil {
		return err
	}
	exportSchemaTree(&plan, nil, out)
	return nil
}

// A schemaNode is one ArrowSchema to write: a field, or (schema set) the
// struct-typed root of a whole schema, exported without building an
// arrow.StructType for it.
type schemaNode struct {
	dt       arrow.DataType
	schema   *arrow.Schema
	name     string
	nullable bool
	md       arrow.Metadata
}

func fieldNode(f arrow.Field) schemaNode {
	return schemaNode{dt: f.Type, name: f.Name, nullable: f.Nullable, md: f.Metadata}
}

func (n schemaNode) numChildren() int {
	if n.schema != nil {
		return n.schema.NumFields()
	}
	return numChildFields(n.dt)
}

func (n schemaNode) child(i int) schemaNode {
	if n.schema != nil {
		return fieldNode(n.schema.Field(i))
	}
	return fieldNode(childField(n.dt, i))
}

// exportSchemaTree writes the planned tree into out. source, when not nil,
// is the schema the plan describes: an import of the untouched tree returns
// it as is.
func exportSchemaTree(plan *schemaPlan, source *arrow.Schema, out *abi.Schema) {
	e := newExport(leak.ExportedSchema)
	sl := newSlab(&e.pin, plan.nodes-1, unsafe.Sizeof(abi.Schema{}), plan.ptrs, 0, plan.bytes)
	f := schemaFiller{e: e, plan: plan.list, sl: sl, strings: sl.bytes + uintptr(plan.mdBytes), handle: e.start(plan.nodes)}
	f.fill(out)
	if source != nil {
		e.source, e.schemaRoot = source, *out
	}
}

// A schemaPlan is a schema tree ready to write: its nodes in the order fill
// writes them, and the room they take.
type schemaPlan struct {
	list                        []plannedNode
	nodes, ptrs, bytes, mdBytes int
}

// schemaPlans caches the plan of every schema exported, keyed weakly: a
// schema's entry goes when the schema is collected. Schemas are immutable,
// and record batches and streams export the same one again and again.
var schemaPlans sync.Map // weak.Pointer[arrow.Schema] → *schemaPlan

func schemaPlanOf(s *arrow.Schema) (*schemaPlan, error) {
	key := weak.Make(s)
	if p, ok := schemaPlans.Load(key); ok {
		return p.(*schemaPlan), nil
	}
	p := new(schemaPlan)
	if err := p.add(schemaNode{schema: s, md: s.Metadata()}, 0); err != nil {
		return nil, err
	}
	if old, loaded := schemaPlans.LoadOrStore(key, p); loaded {
		return old.(*schemaPlan), nil
	}
	runtime.AddCleanup(s, func(k weak.Pointer[arrow.Schema]) { schemaPlans.Delete(k) }, key)
	return p, nil
}

// structTypes caches the struct type of each schema's record batches, keyed
// weakly like schemaPlans: device batches of one schema share it.
var structTypes sync.Map // weak.Pointer[arrow.Schema] → *arrow.StructType

func structOf(s *arrow.Schema) *arrow.StructType {
	key := weak.Make(s)
	if t, ok := structTypes.Load(key); ok {
		return t.(*arrow.StructType)
	}
	t := arrow.StructOf(s.Fields()...)
	if old, loaded := structTypes.LoadOrStore(key, t); loaded {
		return old.(*arrow.StructType)
	}
	runtime.AddCleanup(s, func(k weak.Pointer[arrow.Schema]) { structTypes.Delete(k) }, key)
	return t
}

// add appends the nodes of the tree under n, in the order fill writes them.
func (pl *schemaPlan) add(n schemaNode, depth int) error {
	if depth > maxDepth {
		return invalidf("type nesting deeper than %d", maxDepth)
	}
	p := plannedNode{format: "+s", name: n.name}
	if n.nullable {
		p.flags |= abi.FlagNullable
	}
	if n.schema == nil {
		if n.dt.ID() == arrow.EXTENSION {
			ext := n.dt.(arrow.ExtensionType)
			keys := append(n.md.Keys(), extensionNameKey, extensionMetadataKey)
			vals := append(n.md.Values(), ext.ExtensionName(), ext.Serialize())
			n.md = arrow.NewMetadata(keys, vals)
			n.dt = storageType(n.dt)
		}
		var err error
		if p.format, err = formatOf(n.dt); err != nil {
			return err
		}
		switch t := n.dt.(type) {
		case *arrow.DictionaryType:
			p.dictionary = true
			if t.Ordered {
				p.flags |= abi.FlagDictionaryOrdered
			}
		case *arrow.MapType:
			if t.KeysSorted {
				p.flags |= abi.FlagMapKeysSorted
			}
		}
	}
	p.md = cmeta.Encode(n.md)
	pl.nodes++
	pl.bytes += len(p.format) + 1 + len(p.name) + 1 + metadataBytes(p.md)
	pl.mdBytes += metadataBytes(p.md)
	at := len(pl.list)
	pl.list = append(pl.list, p)
	if p.dictionary {
		return pl.add(schemaNode{dt: n.dt.(*arrow.DictionaryType).ValueType, nullable: true}, depth+1)
	}
	nc := n.numChildren()
	pl.list[at].children = nc
	pl.ptrs += nc
	for i := range nc {
		if err := pl.add(n.child(i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

type schemaFiller struct {
	e       *export
	plan    []plannedNode
	sl      slab
	strings uintptr // slab cursor for C strings, after all metadata blobs
	handle  uintptr
	next    int // index into plan
}

// cstring writes s and a NUL after the metadata blobs, which fill writes
// first (planned at the start of the bytes region).
func (f *schemaFiller) cstring(s string) uintptr {
	p := f.sl.take(&f.strings, uintptr(len(s))+1)
	b := unsafe.Slice((*byte)(p), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return uintptr(p)
}

func (f *schemaFiller) newNode() *abi.Schema {
	return (*abi.Schema)(f.sl.take(&f.sl.structs, unsafe.Sizeof(abi.Schema{})))
}

// fill writes the next planned node into out, then its dictionary or
// children.
func (f *schemaFiller) fill(out *abi.Schema) {
	p := &f.plan[f.next]
	f.next++
	*out = abi.Schema{
		Format:      f.cstring(p.format),
		Name:        f.cstring(p.name),
		Flags:       p.flags,
		Release:     schemaReleaseCB.Ptr(),
		PrivateData: f.handle,
	}
	if len(p.md) > 0 {
		m := f.sl.take(&f.sl.bytes, uintptr(metadataBytes(p.md)))
		copy(unsafe.Slice((*byte)(m), len(p.md)), p.md)
		out.Metadata = uintptr(m)
	}
	if p.dictionary {
		d := f.newNode()
		out.Dictionary = uintptr(unsafe.Pointer(d))
		f.fill(d)
		return
	}
	if p.children == 0 {
		return
	}
	kids := f.sl.takePtrs(p.children)
	out.NChildren = int64(p.children)
	out.Children = uintptr(unsafe.Pointer(&kids[0]))
	for j := range kids {
		c := f.newNode()
		kids[j] = uintptr(unsafe.Pointer(c))
		f.fill(c)
	}
}

// ---- ArrowArray ----

func releaseExportedArray(a *abi.Array, parent *export) {
	if a == nil || a.Release == 0 {
		if a != nil {
			leak.DoubleReleases.Add(1) // only a consumer calls a NULL release's saved pointer
		}
		return
	}
	e := exportOf(a.PrivateData, parent)
	for i := range a.NChildren {
		releaseArrayIn(a.Child(int(i)), e)
	}
	releaseArrayIn((*abi.Array)(abi.Pointer(a.Dictionary)), e)
	*a = abi.Array{} // no pointer into memory about to be unpinned survives
	if e != nil {
		e.releaseNode()
	}
}

// ExportArray exports arr into out without copying its buffers; they stay
// pinned, and arr retained, until C releases every exported node. When
// outSchema is not nil the array's type is exported into it as a nullable
// field with an empty name.
func ExportArray(arr arrow.Array, out *abi.Array, outSchema *abi.Schema) error {
	if arr == nil || out == nil {
		return invalidf("ExportArray: nil array or out")
	}
	if outSchema != nil {
		if err := ExportField(arrow.Field{Type: arr.DataType(), Nullable: true}, outSchema); err != nil {
			return err
		}
	}
	if err := exportArrayTree(arr.Data(), nil, int64(arr.Len()), arr, out); err != nil {
		if outSchema != nil {
			ReleaseSchema(outSchema)
		}
		return err
	}
	return nil
}

// ExportRecordBatch exports rb into out as a struct array with one child per
// column, and its schema into outSchema when that is not nil.
func ExportRecordBatch(rb arrow.RecordBatch, out *abi.Array, outSchema *abi.Schema) error {
	if rb == nil || out == nil {
		return invalidf("ExportRecordBatch: nil record batch or out")
	}
	if outSchema != nil {
		if err := ExportSchema(rb.Schema(), outSchema); err != nil {
			return err
		}
	}
	cols := rb.Columns()
	if err := exportArrayTree(nil, cols, rb.NumRows(), rb, out); err != nil {
		if outSchema != nil {
			ReleaseSchema(outSchema)
		}
		return err
	}
	return nil
}

// exportArrayTree exports root, or when root is nil a struct array without
// validity over cols (a record batch). source, the arrow.Array or
// arrow.RecordBatch exported, is retained until release.
func exportArrayTree(root arrow.ArrayData, cols []arrow.Array, length int64, source interface{ Retain() }, out *abi.Array) error {
	var p arrayPlan
	if root != nil {
		if err := p.count(root, 0); err != nil {
			return err
		}
		p.nodes-- // the root is out itself
	} else {
		p.ptrs += 1 + len(cols) // the NULL validity buffer and the children
		for _, c := range cols {
			if err := p.count(c.Data(), 0); err != nil {
				return err
			}
		}
	}
	e := newExport(leak.ExportedArray)
	source.Retain()
	e.source = source
	defer func() { e.arrayRoot = *out }()
	sl := newSlab(&e.pin, p.nodes, unsafe.Sizeof(abi.Array{}), p.ptrs, p.int64s, 0)
	f := arrayFiller{e: e, sl: sl, handle: e.start(p.nodes + 1)}
	if root != nil {
		f.fill(root, out)
		return nil
	}
	*out = abi.Array{Length: length, NBuffers: 1, NChildren: int64(len(cols)), Release: arrayReleaseCB.Ptr(), PrivateData: f.handle}
	ptrs := f.ptrs(1 + len(cols))
	out.Buffers = uintptr(unsafe.Pointer(&ptrs[0]))
	if len(cols) > 0 {
		out.Children = uintptr(unsafe.Pointer(&ptrs[1]))
	}
	for i, c := range cols {
		n := f.newNode()
		ptrs[1+i] = uintptr(unsafe.Pointer(n))
		f.fill(c.Data(), n)
	}
	return nil
}

// maxDepth bounds recursion over type trees, also against cyclic pointers
// from C.
const maxDepth = 64

type arrayPlan struct{ nodes, ptrs, int64s int }

func (p *arrayPlan) count(d arrow.ArrayData, depth int) error {
	if depth > maxDepth {
		return invalidf("array nesting deeper than %d", maxDepth)
	}
	p.nodes++
	nb, extra := cBufferCount(d)
	p.ptrs += nb + len(d.Children())
	p.int64s += extra
	for _, c := range d.Children() {
		if err := p.count(c, depth+1); err != nil {
			return err
		}
	}
	if dict := dictionaryOf(d); dict != nil {
		return p.count(dict, depth+1)
	}
	return nil
}

// cBufferCount returns how many buffers the C struct of d has, and how many
// of them are int64 size arrays we must make (the variadic buffer sizes that
// view types carry last).
func cBufferCount(d arrow.ArrayData) (n, sizes int) {
	dt := storageType(d.DataType())
	n = len(d.Buffers()) - firstCBuffer(dt.ID(), len(d.Buffers()))
	switch dt.ID() {
	case arrow.BINARY_VIEW, arrow.STRING_VIEW:
		return n + 1, len(d.Buffers()) - 2
	case arrow.STRUCT, arrow.FIXED_SIZE_LIST:
		return max(n, 1), 0
	}
	return n, 0
}

type arrayFiller struct {
	e      *export
	sl     slab
	handle uintptr
}

func (f *arrayFiller) newNode() *abi.Array {
	return (*abi.Array)(f.sl.take(&f.sl.structs, unsafe.Sizeof(abi.Array{})))
}

func (f *arrayFiller) ptrs(n int) []uintptr { return f.sl.takePtrs(n) }

// zeroBuffer is where empty buffers point: C consumers may dereference an
// offsets buffer of a zero-length array, so it is never NULL. Pinned forever.
var (
	zeroPinner runtime.Pinner // never unpinned: a live Pinner keeps its pins
	zeroBuffer = sync.OnceValue(func() uintptr {
		b := new([64]byte)
		zeroPinner.Pin(b)
		return uintptr(unsafe.Pointer(b))
	})
)

func (f *arrayFiller) fill(d arrow.ArrayData, out *abi.Array) {
	nb, nsizes := cBufferCount(d)
	nulls := d.NullN()
	kids := d.Children()
	*out = abi.Array{
		Length:      int64(d.Len()),
		NullCount:   int64(nulls),
		Offset:      int64(d.Offset()),
		NBuffers:    int64(nb),
		NChildren:   int64(len(kids)),
		Release:     arrayReleaseCB.Ptr(),
		PrivateData: f.handle,
	}
	ptrs := f.ptrs(nb + len(kids))
	if nb > 0 {
		out.Buffers = uintptr(unsafe.Pointer(&ptrs[0]))
	}
	var sizes []int64
	if nsizes > 0 {
		sizes = unsafe.Slice((*int64)(f.sl.take(&f.sl.int64s, uintptr(nsizes)*8)), nsizes)
	}
	forEachCBuffer(d, sizes, func(i int, b []byte) {
		switch {
		case b == nil && i == 0:
			// no validity bitmap needed: NULL
		case len(b) == 0:
			ptrs[i] = zeroBuffer()
		default:
			f.e.pin.Pin(&b[0])
			ptrs[i] = uintptr(unsafe.Pointer(&b[0]))
		}
	})
	if len(kids) > 0 {
		out.Children = uintptr(unsafe.Pointer(&ptrs[nb]))
		for i, c := range kids {
			n := f.newNode()
			ptrs[nb+i] = uintptr(unsafe.Pointer(n))
			f.fill(c, n)
		}
	}
	if dict := dictionaryOf(d); dict != nil {
		n := f.newNode()
		out.Dictionary = uintptr(unsafe.Pointer(n))
		f.fill(dict, n)
	}
}

// forEachCBuffer calls f for each buffer of d's C struct, in ArrowArray
// order: arrow-go's buffers less those C does not carry, a nil validity
// bitmap when there are no nulls, and for views the variadic buffer sizes,
// written into sizes (cBufferCount says how many) and passed as bytes.
func forEachCBuffer(d arrow.ArrayData, sizes []int64, f func(i int, b []byte)) {
	bufs := d.Buffers()
	nb, _ := cBufferCount(d)
	first := firstCBuffer(storageType(d.DataType()).ID(), len(bufs))
	for i := first; i < len(bufs) && i-first < nb; i++ {
		switch b := bufs[i]; {
		case i == 0 && (b == nil || d.NullN() == 0):
			f(0, nil)
		case b == nil:
			f(i-first, []byte{})
		default:
			f(i-first, b.Bytes())
		}
	}
	if id := storageType(d.DataType()).ID(); id == arrow.BINARY_VIEW || id == arrow.STRING_VIEW {
		for i := range sizes {
			sizes[i] = int64(bufs[2+i].Len())
		}
		var b []byte
		if len(sizes) > 0 {
			b = unsafe.Slice((*byte)(unsafe.Pointer(&sizes[0])), 8*len(sizes))
		}
		f(nb-1, b)
	}
}

// ExportDeviceArray exports arr as an ArrowDeviceArray on the CPU (device_id
// -1, no sync event).
func ExportDeviceArray(arr arrow.Array, out *abi.DeviceArray, outSchema *abi.Schema) error {
	if out == nil {
		return invalidf("ExportDeviceArray: nil out")
	}
	if err := ExportArray(arr, &out.Array, outSchema); err != nil {
		return err
	}
	out.DeviceID, out.DeviceType, out.SyncEvent, out.Reserved = -1, abi.DeviceCPU, 0, [3]int64{}
	return nil
}

// dictionaryOf returns d's dictionary or nil (arrow-go returns a typed nil).
func dictionaryOf(d arrow.ArrayData) arrow.ArrayData {
	if dd, ok := d.Dictionary().(*array.Data); ok && dd == nil {
		return nil
	}
	return d.Dictionary()
}
