package cdevice

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
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
	owner  interface{ Release() } // arrow-go values kept alive for C
	pin    runtime.Pinner
	live   atomic.Int32 // nodes not yet released

	// A schema export keeps the schema it describes and its root as written,
	// for exportedSchema.
	source *arrow.Schema
	root   abi.Schema

	// Planning state, reused between exports.
	strs [][]byte // schema: format, name and metadata of each node, in fill order
	fmts []string
}

var exportPool = sync.Pool{New: func() any { return new(export) }}

func newExport() *export {
	e := exportPool.Get().(*export)
	liveExports.Add(1)
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
	if e.owner != nil {
		e.owner.Release()
		e.owner = nil
	}
	e.handle.Delete()
	e.handle, e.source = 0, nil
	liveExports.Add(-1)
	clear(e.strs)
	e.strs = e.strs[:0]
	clear(e.fmts)
	e.fmts = e.fmts[:0]
	exportPool.Put(e)
}

// abandon undoes an export that failed before anything was handed to C.
func (e *export) abandon() {
	e.pin.Unpin()
	if e.owner != nil {
		e.owner.Release()
		e.owner = nil
	}
	liveExports.Add(-1)
	e.strs = e.strs[:0]
	e.fmts = e.fmts[:0]
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

var schemaReleaseCB = ffi.NewCallback1("ArrowSchema.release", func(p uintptr) uintptr {
	releaseExportedSchema((*abi.Schema)(abi.Pointer(p)))
	return 0
})

func releaseExportedSchema(s *abi.Schema) {
	if s == nil || s.Release == 0 {
		return
	}
	v, ok := ffi.Handle(s.PrivateData).Value()
	for i := range s.NChildren {
		releaseSchema(s.Child(int(i)))
	}
	releaseSchema((*abi.Schema)(abi.Pointer(s.Dictionary)))
	s.Release, s.PrivateData = 0, 0
	if ok {
		v.(*export).releaseNode()
	}
}

// releaseSchema calls the release callback of s unless it is NULL or released
// (directly in Go when it is ours).
func releaseSchema(s *abi.Schema) {
	if s == nil || s.Release == 0 {
		return
	}
	ffi.Call1(s.Release, uintptr(unsafe.Pointer(s)))
}

// ExportSchema exports s into out as a struct-typed ArrowSchema whose
// children are the schema's fields and whose metadata is the schema's.
func ExportSchema(s *arrow.Schema, out *abi.Schema) error {
	if s == nil || out == nil {
		return invalidf("ExportSchema: nil schema or out")
	}
	return exportSchemaTree(schemaNode{schema: s, md: s.Metadata()}, s, out)
}

// ExportField exports f (name, type, nullability, metadata) into out.
func ExportField(f arrow.Field, out *abi.Schema) error {
	if out == nil || f.Type == nil {
		return invalidf("ExportField: nil out or type")
	}
	return exportSchemaTree(schemaNode{dt: f.Type, name: f.Name, nullable: f.Nullable, md: f.Metadata}, nil, out)
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

// exportSchemaTree writes n into out. source, when not nil, is what the tree
// describes: an import of the unmodified tree returns it as is.
func exportSchemaTree(n schemaNode, source *arrow.Schema, out *abi.Schema) error {
	e := newExport()
	nodes, ptrs, bytes, err := e.planSchema(n, 0)
	if err != nil {
		e.abandon()
		exportPool.Put(e)
		return err
	}
	sl := newSlab(&e.pin, nodes-1, unsafe.Sizeof(abi.Schema{}), ptrs, 0, bytes)
	mdTotal := 0
	for _, md := range e.strs {
		mdTotal += metadataBytes(md)
	}
	f := schemaFiller{e: e, sl: sl, strings: sl.bytes + uintptr(mdTotal), handle: e.start(nodes)}
	f.fill(n, out)
	e.source, e.root = source, *out
	return nil
}

// planSchema computes the format and metadata of every node of the tree
// (stored in e.fmts and e.strs, in the order fill consumes them) and counts
// nodes, child pointers and string bytes.
func (e *export) planSchema(n schemaNode, depth int) (nodes, ptrs, bytes int, err error) {
	if depth > maxDepth {
		return 0, 0, 0, invalidf("type nesting deeper than %d", maxDepth)
	}
	format := "+s"
	if n.schema == nil {
		if ext, ok := n.dt.(arrow.ExtensionType); ok {
			keys := append(n.md.Keys(), extensionNameKey, extensionMetadataKey)
			vals := append(n.md.Values(), ext.ExtensionName(), ext.Serialize())
			n.md = arrow.NewMetadata(keys, vals)
			n.dt = storageType(n.dt)
		}
		if format, err = formatOf(n.dt); err != nil {
			return 0, 0, 0, err
		}
	}
	mdBytes := encodeMetadata(n.md)
	e.fmts = append(e.fmts, format)
	e.strs = append(e.strs, mdBytes)
	nodes, bytes = 1, len(format)+1+len(n.name)+1+metadataBytes(mdBytes)
	if d, ok := n.dt.(*arrow.DictionaryType); ok {
		c, p, b, err := e.planSchema(schemaNode{dt: d.ValueType, nullable: true}, depth+1)
		return nodes + c, p, bytes + b, err
	}
	nc := n.numChildren()
	ptrs = nc
	for i := range nc {
		c, p, b, err := e.planSchema(n.child(i), depth+1)
		if err != nil {
			return 0, 0, 0, err
		}
		nodes, ptrs, bytes = nodes+c, ptrs+p, bytes+b
	}
	return nodes, ptrs, bytes, nil
}

type schemaFiller struct {
	e       *export
	sl      slab
	strings uintptr // slab cursor for C strings, after all metadata blobs
	handle  uintptr
	next    int // index into e.fmts / e.strs
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

// fill writes node n into out and recurses, in the order of planSchema.
func (f *schemaFiller) fill(n schemaNode, out *abi.Schema) {
	i := f.next
	f.next++
	*out = abi.Schema{
		Format:      f.cstring(f.e.fmts[i]),
		Name:        f.cstring(n.name),
		Release:     schemaReleaseCB.Ptr(),
		PrivateData: f.handle,
	}
	if md := f.e.strs[i]; len(md) > 0 {
		p := f.sl.take(&f.sl.bytes, uintptr(metadataBytes(md)))
		copy(unsafe.Slice((*byte)(p), len(md)), md)
		out.Metadata = uintptr(p)
	}
	if n.nullable {
		out.Flags |= abi.FlagNullable
	}
	switch t := storageType(n.dt).(type) {
	case *arrow.DictionaryType:
		if t.Ordered {
			out.Flags |= abi.FlagDictionaryOrdered
		}
		d := f.newNode()
		out.Dictionary = uintptr(unsafe.Pointer(d))
		f.fill(schemaNode{dt: t.ValueType, nullable: true}, d)
		return
	case *arrow.MapType:
		if t.KeysSorted {
			out.Flags |= abi.FlagMapKeysSorted
		}
	}
	if n.schema == nil {
		n.dt = storageType(n.dt)
	}
	nc := n.numChildren()
	if nc == 0 {
		return
	}
	kids := f.sl.takePtrs(nc)
	out.NChildren = int64(nc)
	out.Children = uintptr(unsafe.Pointer(&kids[0]))
	for j := range nc {
		c := f.newNode()
		kids[j] = uintptr(unsafe.Pointer(c))
		f.fill(n.child(j), c)
	}
}

// exportedSchema returns the schema behind s when s is the untouched root of
// one of our schema exports: a Go consumer of a Go producer then skips the
// parse. Immutable arrow-go schemas make handing back the source safe.
func exportedSchema(s *abi.Schema) *arrow.Schema {
	if !schemaReleaseCB.Is(s.Release) {
		return nil
	}
	v, ok := ffi.Handle(s.PrivateData).Value()
	if !ok {
		return nil
	}
	e := v.(*export)
	if e.source == nil || e.root != *s || !childrenLive(s, 0) {
		return nil
	}
	return e.source
}

// childrenLive reports whether no child of s was moved out or released.
func childrenLive(s *abi.Schema, depth int) bool {
	if depth > maxDepth {
		return false
	}
	for i := range int(s.NChildren) {
		c := s.Child(i)
		if c == nil || c.Release == 0 || !childrenLive(c, depth+1) {
			return false
		}
	}
	if s.Dictionary != 0 {
		d := (*abi.Schema)(abi.Pointer(s.Dictionary))
		return d.Release != 0 && childrenLive(d, depth+1)
	}
	return true
}

// ---- ArrowArray ----

var arrayReleaseCB = ffi.NewCallback1("ArrowArray.release", func(p uintptr) uintptr {
	releaseExportedArray((*abi.Array)(abi.Pointer(p)))
	return 0
})

func releaseExportedArray(a *abi.Array) {
	if a == nil || a.Release == 0 {
		return
	}
	v, ok := ffi.Handle(a.PrivateData).Value()
	for i := range a.NChildren {
		releaseArray(a.Child(int(i)))
	}
	releaseArray((*abi.Array)(abi.Pointer(a.Dictionary)))
	a.Release, a.PrivateData = 0, 0
	if ok {
		v.(*export).releaseNode()
	}
}

// releaseArray calls the release callback of a unless it is NULL or released
// (directly in Go when it is ours).
func releaseArray(a *abi.Array) {
	if a == nil || a.Release == 0 {
		return
	}
	ffi.Call1(a.Release, uintptr(unsafe.Pointer(a)))
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
	d := arr.Data()
	if err := exportArrayTree(d, nil, int64(d.Len()), d, out); err != nil {
		if outSchema != nil {
			releaseSchema(outSchema)
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
			releaseSchema(outSchema)
		}
		return err
	}
	return nil
}

// exportArrayTree exports root, or when root is nil a struct array without
// validity over cols (a record batch). owner is retained until release.
func exportArrayTree(root arrow.ArrayData, cols []arrow.Array, length int64, owner interface{ Retain() }, out *abi.Array) error {
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
	e := newExport()
	owner.Retain()
	e.owner = owner.(interface{ Release() })
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
	dt := storageType(d.DataType())
	bufs := d.Buffers()
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
	first := firstCBuffer(dt.ID(), len(bufs))
	for i := first; i < len(bufs) && i-first < nb; i++ {
		b := bufs[i]
		switch {
		case i == 0 && (nulls == 0 || b == nil):
			// no validity bitmap needed: NULL
		case b == nil || b.Len() == 0:
			ptrs[i-first] = zeroBuffer()
		default:
			bs := b.Bytes()
			f.e.pin.Pin(&bs[0])
			ptrs[i-first] = uintptr(unsafe.Pointer(&bs[0]))
		}
	}
	if nsizes > 0 {
		sizes := unsafe.Slice((*int64)(f.sl.take(&f.sl.int64s, uintptr(nsizes)*8)), nsizes)
		for i := range sizes {
			sizes[i] = int64(bufs[2+i].Len())
		}
		ptrs[nb-1] = uintptr(unsafe.Pointer(&sizes[0]))
	} else if nsizes == 0 && (dt.ID() == arrow.BINARY_VIEW || dt.ID() == arrow.STRING_VIEW) {
		ptrs[nb-1] = zeroBuffer()
	}
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
