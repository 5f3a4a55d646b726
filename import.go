package cdevice

import (
	"context"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/leak"
)

// ImportArray imports arr, typed by schema. Both are released by the import:
// schema at once, arr when the last arrow-go reference to its buffers is
// released. On failure both are released before the error returns.
//
// Every import moves the root struct it is given: it copies the struct and
// marks the caller's released (release = NULL) before it returns, so the
// caller's struct may be reused or freed at once; the children and buffers
// it points to stay the producer's until the release.
func ImportArray(arr *abi.Array, schema *abi.Schema, opts ...ImportOption) (arrow.Array, error) {
	f, err := ImportField(schema)
	if err != nil {
		ReleaseArray(arr)
		return nil, err
	}
	return ImportArrayWithType(arr, f.Type, opts...)
}

// ImportArrayWithType imports arr as an array of type dt, zero-copy. The
// producer's release runs exactly once, when the last arrow-go reference to
// the array's buffers is released (at once if it has none). On failure arr
// is released before the error returns.
func ImportArrayWithType(arr *abi.Array, dt arrow.DataType, opts ...ImportOption) (arrow.Array, error) {
	if dt == nil {
		ReleaseArray(arr)
		return nil, invalidf("nil data type")
	}
	if arr != nil && arr.Release != 0 {
		if src, ok := exportedSource(arr).(arrow.Array); ok && arrow.TypeEqual(src.DataType(), dt, arrow.CheckMetadata()) {
			src.Retain()
			ReleaseArray(arr)
			return validated(src, applyImportOptions(opts).validate(src))
		}
	}
	imp, err := startImport(arr)
	if err != nil {
		return nil, err
	}
	var counts slabCounts
	counts.add(dt, true, 0)
	b := builder{imp: imp, slab: newImportSlab(counts)}
	d, err := b.build(&imp.c, dt, 0)
	if err != nil {
		imp.fail()
		return nil, err
	}
	defer d.Release()
	a, err := finishImport(imp, func() arrow.Array { return array.MakeFromData(d) })
	if err != nil {
		return nil, err
	}
	return validated(a, applyImportOptions(opts).validate(a))
}

// validated returns v, or releases it and returns err when validation failed.
func validated[T interface{ Release() }](v T, err error) (T, error) {
	if err != nil {
		v.Release()
		var zero T
		return zero, err
	}
	return v, nil
}

// ImportRecordBatch imports a struct array and its struct-typed schema as a
// record batch, one column per child. Ownership is as for ImportArray.
func ImportRecordBatch(arr *abi.Array, schema *abi.Schema, opts ...ImportOption) (arrow.RecordBatch, error) {
	sc, err := ImportSchema(schema)
	if err != nil {
		ReleaseArray(arr)
		return nil, err
	}
	return ImportRecordBatchWithSchema(arr, sc, opts...)
}

// ImportRecordBatchWithSchema imports a struct array as a record batch of
// schema sc (for streams, whose schema is imported once).
func ImportRecordBatchWithSchema(arr *abi.Array, sc *arrow.Schema, opts ...ImportOption) (arrow.RecordBatch, error) {
	if sc == nil {
		ReleaseArray(arr)
		return nil, invalidf("nil schema")
	}
	if arr != nil && arr.Release != 0 {
		if src, ok := exportedSource(arr).(arrow.RecordBatch); ok && src.Schema() == sc {
			src.Retain()
			ReleaseArray(arr)
			return validated(src, applyImportOptions(opts).validateBatch(src))
		}
	}
	imp, err := startImport(arr)
	if err != nil {
		return nil, err
	}
	b := builder{imp: imp, slab: newImportSlab(batchCounts(sc))}
	cols, length, err := b.buildColumns(&imp.c, sc)
	if err != nil {
		imp.fail()
		return nil, err
	}
	rb, err := finishImport(imp, func() arrow.RecordBatch {
		var small [16]arrow.Array // NewRecordBatch copies the columns
		arrs := small[:]
		if len(cols) > len(small) {
			arrs = make([]arrow.Array, len(cols))
		}
		arrs = arrs[:len(cols)]
		for i, c := range cols {
			arrs[i] = array.MakeFromData(c)
			c.Release()
		}
		rb := array.NewRecordBatch(sc, arrs, length)
		for _, a := range arrs {
			a.Release()
		}
		return rb
	})
	if err != nil {
		return nil, err
	}
	return validated(rb, applyImportOptions(opts).validateBatch(rb))
}

// recordLabel names the struct root of a record batch in errors.
var recordLabel = arrow.StructOf()

// buildColumns validates the struct array at a as the root of a record
// batch of schema sc (no nulls) and builds its columns, sliced to the root's
// offset and length, without materializing the struct array itself.
func (b *builder) buildColumns(a *abi.Array, sc *arrow.Schema) ([]arrow.ArrayData, int64, error) {
	n := node{a: a, dt: recordLabel, id: arrow.STRUCT}
	if err := n.checkHeader(); err != nil {
		return nil, 0, err
	}
	switch {
	case a.NBuffers != 1:
		return nil, 0, n.errorf("record batch root has %d buffers, want 1", a.NBuffers)
	case int(a.NChildren) != sc.NumFields():
		return nil, 0, n.errorf("record batch root has %d children, the schema %d fields", a.NChildren, sc.NumFields())
	case a.Dictionary != 0:
		return nil, 0, n.errorf("record batch root has a dictionary")
	case n.cbuffers[0] != 0 && !fits(n.cbuffers[0], bitmapBytes(n.end)):
		return nil, 0, n.errorf("validity bitmap at %#x cannot hold %d bits", n.cbuffers[0], n.end)
	case a.NullCount > 0 || (a.NullCount < 0 && n.cbuffers[0] != 0 &&
		bitutil.CountSetBits(unsafe.Slice((*byte)(abi.Pointer(n.cbuffers[0])), bitmapBytes(n.end)), int(a.Offset), int(a.Length)) != int(a.Length)):
		return nil, 0, n.errorf("a record batch's struct array has nulls")
	}
	cols := b.slab.children(int(a.NChildren))
	for i := range cols {
		ca, ct, err := n.sub(a.Child(i), sc.Field(i).Type, "column", i)
		var c *array.Data
		if err == nil {
			c, err = b.build(ca, ct, 1)
		}
		if err != nil {
			releaseData(cols[:i])
			return nil, 0, err
		}
		if int64(c.Len()) < n.end {
			c.Release()
			releaseData(cols[:i])
			return nil, 0, n.errorf("column %d has length %d, shorter than offset+length %d", i, c.Len(), n.end)
		}
		if a.Offset != 0 || int64(c.Len()) != a.Length {
			s := array.NewSliceData(c, a.Offset, n.end)
			c.Release()
			c = s.(*array.Data)
		}
		cols[i] = c
	}
	return cols, a.Length, nil
}

func releaseData(ds []arrow.ArrayData) {
	for _, d := range ds {
		d.Release()
	}
}

// ImportDeviceArray imports an ArrowDeviceArray as an arrow.Array. It waits
// on the producer's sync_event first, on the host (ctx bounds the wait,
// and the copy to the host): sync_event is NULL on the CPU, else a pointer to the producer's
// event — a cudaEvent_t* (CUDA, CUDA_HOST, CUDA_MANAGED), a hipEvent_t*
// (ROCM, ROCM_HOST) or a cl_event* (OPENCL) — which stays the producer's.
// Memory the host can read (CPU, CUDA host and managed memory, ROCm host
// memory, OpenCL SVM on a CPU device) is wrapped without copying; memory on
// other devices is copied to Go memory (ImportDeviceArrayOnDevice keeps it
// where it is). A device with no loaded backend fails with ErrUnknownDevice. On
// failure the input is released.
func ImportDeviceArray(ctx context.Context, arr *abi.DeviceArray, schema *abi.Schema, opts ...ImportOption) (arrow.Array, error) {
	cfg := applyImportOptions(opts)
	cfg.ctx = ctx
	return deviceToHost(arr, cfg, func() { ReleaseSchema(schema) },
		func() (arrow.Array, error) { return ImportArray(&arr.Array, schema, opts...) },
		func() (arrow.Array, error) {
			da, err := ImportDeviceArrayOnDevice(ctx, arr, schema, opts...)
			if err != nil {
				return nil, err
			}
			defer da.Release()
			a, err := da.ToHost(cfg.context())
			if err != nil {
				return nil, err
			}
			return validated(a, cfg.validate(a))
		})
}

// ImportDeviceRecordBatch imports a struct-typed ArrowDeviceArray and its
// schema as a record batch in host memory, as ImportDeviceArray imports an
// array (ImportDeviceRecordBatchOnDevice keeps it on its device).
func ImportDeviceRecordBatch(ctx context.Context, arr *abi.DeviceArray, schema *abi.Schema, opts ...ImportOption) (arrow.RecordBatch, error) {
	sc, err := ImportSchema(schema)
	if err != nil {
		ReleaseDeviceArray(arr)
		return nil, err
	}
	return ImportDeviceRecordBatchWithSchema(ctx, arr, sc, opts...)
}

// ImportDeviceRecordBatchWithSchema is ImportDeviceRecordBatch with a
// schema already imported (a stream's).
func ImportDeviceRecordBatchWithSchema(ctx context.Context, arr *abi.DeviceArray, sc *arrow.Schema, opts ...ImportOption) (arrow.RecordBatch, error) {
	cfg := applyImportOptions(opts)
	cfg.ctx = ctx
	return deviceToHost(arr, cfg, func() {},
		func() (arrow.RecordBatch, error) { return ImportRecordBatchWithSchema(&arr.Array, sc, opts...) },
		func() (arrow.RecordBatch, error) {
			b, err := ImportDeviceRecordBatchOnDeviceWithSchema(ctx, arr, sc, opts...)
			if err != nil {
				return nil, err
			}
			defer b.Release()
			rb, err := b.ToHost(cfg.context())
			if err != nil {
				return nil, err
			}
			return validated(rb, cfg.validateBatch(rb))
		})
}

// deviceToHost brings arr to host memory: memory the host can read is
// wrapped in place by onHost once the producer's event is done; other
// memory is imported on its device and copied by onDevice. release gives
// back what else onHost would have taken (the schema) when neither runs.
func deviceToHost[T any](arr *abi.DeviceArray, cfg importConfig, release func(), onHost, onDevice func() (T, error)) (T, error) {
	var zero T
	if arr == nil {
		release()
		return zero, invalidf("nil ArrowDeviceArray")
	}
	fail := func(err error) (T, error) {
		release()
		ReleaseArray(&arr.Array)
		return zero, err
	}
	if arr.DeviceType == abi.DeviceCPU {
		if arr.SyncEvent != 0 {
			return fail(invalidf("CPU ArrowDeviceArray with a non-NULL sync_event"))
		}
		return onHost()
	}
	dev, err := device.Lookup(arr.DeviceType, arr.DeviceID)
	if err != nil {
		return fail(err) // wraps ErrUnknownDevice
	}
	if !dev.HostAccessible() {
		return onDevice()
	}
	if err := dev.WaitSyncEvent(cfg.context(), arr.SyncEvent, nil); err != nil {
		return fail(err)
	}
	return onHost()
}

// An arrayImport owns one imported ArrowArray tree: the root struct is moved
// into c, and every arrow-go buffer wrapping its memory counts in live. It is
// the memory.Allocator of those buffers: the last Free calls the producer's
// release.
type arrayImport struct {
	c    abi.Array
	live atomic.Int64
	done atomic.Bool
	leak leak.Object
	// No Go pointer: the producer's release gets &c, and cgo's checks
	// (a cgo producer's release is Go code) refuse memory holding one.
}

// A builder builds arrow-go data over the tree of imp, taking the
// per-node objects from slab (kept apart from imp, which C reads).
type builder struct {
	imp  *arrayImport
	slab importSlab
}

func startImport(arr *abi.Array) (*arrayImport, error) {
	if arr == nil {
		return nil, invalidf("nil ArrowArray")
	}
	if arr.Release == 0 {
		return nil, ErrReleased
	}
	imp := &arrayImport{c: *arr}
	arr.Release = 0 // moved: the source no longer owns the tree
	imp.leak = leak.Track(leak.ImportedArray)
	imp.live.Store(1) // the import's own reference, dropped by finish
	return imp, nil
}

// finishImport builds the arrow-go value, recovering from a panic in
// arrow-go's constructors (the input was already validated; this is a
// backstop), then drops the import's own reference.
func finishImport[T any](imp *arrayImport, make func() T) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = invalidf("arrow-go rejected the imported array: %v", r)
			imp.fail()
		}
	}()
	v = make()
	imp.Free(nil)
	return v, nil
}

// madeLater makes (and releases) the arrow-go array of d, a dictionary's
// values, which arrow-go itself makes only when first asked for it: a
// structure its constructors reject is then refused by the import, as the
// rest of the tree is by finishImport, not met as a panic in the caller's
// code after the import succeeded (a backstop: the checks refuse what is
// known to be wrong).
func madeLater(d *array.Data) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = invalidf("arrow-go rejected a dictionary's values: %v", r)
		}
	}()
	array.MakeFromData(d).Release()
	return nil
}

// release calls the producer's release once.
func (imp *arrayImport) release() {
	if imp.done.CompareAndSwap(false, true) {
		ReleaseArray(&imp.c)
		imp.leak.Done()
	}
}

// fail releases the producer's tree now; buffers already wrapped are
// unreachable garbage and never call Free.
func (imp *arrayImport) fail() { imp.release() }

func (imp *arrayImport) Allocate(int) []byte {
	panic("cdevice: imported buffers are not allocated")
}

func (imp *arrayImport) Reallocate(int, []byte) []byte {
	panic("cdevice: imported buffers are not reallocated")
}

func (imp *arrayImport) Free([]byte) {
	if imp.live.Add(-1) == 0 {
		imp.release()
	}
}

// wrap makes an arrow-go buffer over size bytes of foreign memory at p.
func (b *builder) wrap(p uintptr, size int64) *memory.Buffer {
	switch {
	case p == 0:
		return nil
	case size == 0:
		// Present but empty (the data of an all-null string array, say):
		// an empty buffer, as arrow-go's importer gives, holding nothing of C.
		return b.slab.buffer(nil, nil)
	}
	b.imp.live.Add(1)
	return b.slab.buffer(unsafe.Slice((*byte)(abi.Pointer(p)), size), b.imp)
}

// build validates a and wraps its buffers as arrow-go data of type dt.
func (b *builder) build(a *abi.Array, dt arrow.DataType, depth int) (*array.Data, error) {
	n, err := visit(a, dt, depth)
	if err != nil {
		return nil, err
	}
	var dict *array.Data
	if a.Dictionary != 0 {
		c, ct, err := n.dictionary()
		if err == nil {
			dict, err = b.build(c, ct, depth+1)
		}
		if err == nil {
			err = madeLater(dict)
		}
		if err != nil {
			return nil, err // what was built is garbage once the import fails
		}
	}
	children := b.slab.children(int(a.NChildren))
	for i := range children {
		c, ct, err := n.child(i)
		var cd *array.Data
		if err == nil {
			cd, err = b.build(c, ct, depth+1)
		}
		if err != nil {
			releaseBuilt(dict, children[:i])
			return nil, err
		}
		children[i] = cd
	}
	bufs, nulls, err := b.buffers(&n, children)
	if err != nil {
		releaseBuilt(dict, children)
		return nil, err
	}
	d := b.slab.newData(dt, int(a.Length), bufs, children, nulls, int(a.Offset), dict)
	for _, buf := range bufs {
		if buf != nil {
			buf.Release() // d holds them now
		}
	}
	releaseBuilt(dict, children) // and these
	return d, nil
}

// releaseBuilt releases what build made of a node's dictionary and children.
func releaseBuilt(dict *array.Data, children []arrow.ArrayData) {
	if dict != nil {
		dict.Release()
	}
	releaseData(children)
}

// cBuffersOf returns the n_buffers the C interface gives a storage type (-1:
// variable, for views) and whether one more (a legacy union validity bitmap)
// is accepted.
func cBuffersOf(dt arrow.DataType) (n int, legacy bool) {
	switch dt.ID() {
	case arrow.NULL, arrow.RUN_END_ENCODED:
		return 0, false
	case arrow.STRUCT, arrow.FIXED_SIZE_LIST:
		return 1, false
	case arrow.SPARSE_UNION:
		return 1, true
	case arrow.DENSE_UNION:
		return 2, true
	case arrow.BINARY, arrow.STRING, arrow.LARGE_BINARY, arrow.LARGE_STRING, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		return 3, false
	case arrow.BINARY_VIEW, arrow.STRING_VIEW:
		return -1, false
	}
	return 2, false
}

// buffers wraps the C buffers of n in arrow-go's layout for its type, after
// checking that each is present when needed and that children are long
// enough for what indexes them.
func (b *builder) buffers(n *node, children []arrow.ArrayData) (bufs []*memory.Buffer, nulls int, err error) {
	a, end := n.a, n.end
	nulls = int(a.NullCount)
	// Sizes first, for every type: they bound what the checks below read.
	var scratch [8]int64
	sizes, err := cBufferSizes(n, n.hostRead, scratch[:0])
	if err != nil {
		return nil, 0, err
	}
	switch n.id {
	case arrow.NULL:
		return nil, int(a.Length), nil
	case arrow.RUN_END_ENCODED:
		return nil, 0, n.checkRunEnds(children)
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return b.unionBuffers(n, children)
	}
	if n.cbuffers[0] == 0 {
		nulls = 0 // an unknown count (-1): visit refused a positive one without a bitmap
	}
	switch t := n.dt.(type) {
	case *arrow.StructType:
		for i, c := range children {
			if int64(c.Len()) < end {
				return nil, 0, n.errorf("child %d has length %d, shorter than offset+length %d", i, c.Len(), end)
			}
		}
	case *arrow.FixedSizeListType:
		if need, ok := mulChecked(end, int64(t.Len())); !ok || int64(children[0].Len()) < need {
			return nil, 0, n.errorf("child has length %d, need %d", children[0].Len(), need)
		}
	case arrow.ListLikeType:
		if id := t.ID(); (id == arrow.LIST || id == arrow.LARGE_LIST || id == arrow.MAP) && int64(children[0].Len()) < sizes[2] {
			return nil, 0, n.errorf("offsets reach %d, past the child's length %d", sizes[2], children[0].Len())
		}
	}
	cb := n.cbuffers
	if id := n.id; id == arrow.BINARY_VIEW || id == arrow.STRING_VIEW {
		cb = cb[:len(cb)-1] // arrow-go's view data has no variadic sizes buffer
	}
	bufs = b.slab.bufferSlice(len(cb))
	for i, p := range cb {
		bufs[i] = b.wrap(p, sizes[i])
	}
	return bufs, nulls, nil
}

// hostRead reads element idx (w bytes wide, signed) of C buffer i, which is
// in host memory.
func (n *node) hostRead(i int, idx, w int64) int64 {
	p := abi.Pointer(n.cbuffers[i])
	switch w {
	case 2:
		return int64(unsafe.Slice((*int16)(p), idx+1)[idx])
	case 4:
		return int64(unsafe.Slice((*int32)(p), idx+1)[idx])
	}
	return unsafe.Slice((*int64)(p), idx+1)[idx]
}

// maxBufferBytes bounds the size of any buffer described by C. The C
// interface gives no buffer sizes: they follow from lengths and, for
// variable-length data, from values in other buffers (the last offset, the
// variadic sizes), which a broken or hostile producer can set to anything.
// No machine maps more than 2^48 bytes (Go's own heap assumes 48-bit
// addresses), so a size beyond that, such as a last offset of 2^62 over a
// 4-byte buffer, is refused before anything reads or wraps that far. A
// smaller lie cannot be told from a real buffer.
const maxBufferBytes = min(math.MaxInt, 1<<48)

// fits reports whether size bytes starting at p can be a real buffer: at
// most maxBufferBytes, and not wrapping past the end of the address space
// (a Go slice over them would panic, possible on 32-bit).
func fits(p uintptr, size int64) bool {
	return size >= 0 && size <= maxBufferBytes && uint64(size) <= uint64(^uintptr(0)-p)
}

// cBufferSizes returns the size in bytes of each C buffer of n, which a
// caller can copy or wrap: for binary types the data size is the last
// offset, for views each variadic buffer's size comes from the sizes buffer;
// read fetches those values (from host or device memory). Lists get one
// extra entry: how far into the child their offsets reach. The result is
// built in scratch when it fits. Every size is checked with fits, and every
// value read lies inside the size its buffer is known to have.
func cBufferSizes(n *node, read func(buf int, idx, w int64) int64, scratch []int64) ([]int64, error) {
	sizes, err := cBufferSizesUnchecked(n, read, scratch)
	if err != nil {
		return nil, err
	}
	for i, p := range n.cbuffers {
		switch {
		case p == 0 && i > 0 && n.a.Length > 0 && sizes[i] > 0:
			// Buffer 0 is a validity bitmap, NULL for no nulls (visit
			// checked null_count), or a union's type ids, checked with them;
			// an array of no rows needs nothing (at any offset: a NULL
			// buffer is wrapped as none).
			return nil, n.errorf("buffer %d is NULL, where %d bytes are needed", i, sizes[i])
		case p != 0 && !fits(p, sizes[i]):
			return nil, n.errorf("buffer %d would be %d bytes from %#x, more than an address space holds", i, sizes[i], p)
		}
	}
	return sizes, nil
}

// cBufferSizesUnchecked computes what cBufferSizes returns; only the values
// it reads are checked against their buffers here.
func cBufferSizesUnchecked(n *node, read func(buf int, idx, w int64) int64, scratch []int64) ([]int64, error) {
	end, cb := n.end, n.cbuffers
	if cap(scratch) < len(cb)+1 {
		scratch = make([]int64, 0, len(cb)+1)
	}
	sizes := scratch[:len(cb)]
	clear(sizes)
	if len(cb) > 0 {
		sizes[0] = bitmapBytes(end)
	}
	// element reads buffer i at idx, which must be present unless empty.
	element := func(i int, idx, w int64) (int64, error) {
		if cb[i] == 0 {
			if n.a.Length == 0 { // nothing is read, at any offset
				return 0, nil
			}
			return 0, n.errorf("buffer %d is NULL", i)
		}
		if !fits(cb[i], (idx+1)*w) { // idx <= end <= maxElements: no overflow
			return 0, n.errorf("buffer %d at %#x cannot hold %d elements", i, cb[i], idx+1)
		}
		return read(i, idx, w), nil
	}
	switch n.id {
	case arrow.NULL, arrow.RUN_END_ENCODED:
		return sizes, nil
	case arrow.STRUCT, arrow.FIXED_SIZE_LIST:
		return sizes, nil
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		ids := 0
		if want, _ := cBuffersOf(n.dt); len(cb) == want+1 {
			ids = 1 // legacy validity bitmap first
		}
		sizes[ids] = end
		if n.id == arrow.DENSE_UNION {
			sizes[ids+1] = end * 4
		}
		return sizes, nil
	case arrow.BINARY, arrow.STRING, arrow.LARGE_BINARY, arrow.LARGE_STRING, arrow.LIST, arrow.LARGE_LIST, arrow.MAP:
		w := offsetWidth(n.dt)
		first, err := element(1, n.a.Offset, w)
		if err != nil {
			return nil, err
		}
		last, err := element(1, end, w)
		if err != nil {
			return nil, err
		}
		if first < 0 || last < first {
			return nil, n.errorf("offsets run from %d to %d", first, last)
		}
		sizes[1] = (end + 1) * w
		if len(sizes) == 2 { // lists: record how far into the child
			sizes = append(sizes, last)
		} else {
			sizes[2] = last
		}
		return sizes, nil
	case arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		sizes[1], sizes[2] = end*offsetWidth(n.dt), end*offsetWidth(n.dt)
		return sizes, nil
	case arrow.BINARY_VIEW, arrow.STRING_VIEW:
		nvar := len(cb) - 3
		if nvar < 0 {
			return nil, n.errorf("has %d buffers, want validity, views and variadic sizes", len(cb))
		}
		sizes[1] = end * int64(arrow.ViewHeaderSizeBytes)
		sizes[len(cb)-1] = int64(nvar) * 8
		if nvar > 0 && cb[len(cb)-1] == 0 {
			return nil, n.errorf("variadic buffer sizes are NULL")
		}
		for k := range nvar {
			s, err := element(len(cb)-1, int64(k), 8)
			if err != nil {
				return nil, err
			}
			if s < 0 || (s > 0 && cb[2+k] == 0) {
				return nil, n.errorf("variadic buffer %d: size %d, pointer %#x", k, s, cb[2+k])
			}
			sizes[2+k] = s
		}
		return sizes, nil
	}
	fw, ok := n.dt.(arrow.FixedWidthDataType)
	if !ok {
		return nil, unsupportedf("importing %s arrays", n.dt)
	}
	bitsTotal, ok := mulChecked(end, int64(fw.BitWidth()))
	if !ok {
		return nil, n.errorf("length %d too large", end)
	}
	sizes[1] = (bitsTotal + 7) / 8
	return sizes, nil
}

// unionBuffers checks every type id and (dense) offset: a bad one would make
// arrow-go index past its children.
func (b *builder) unionBuffers(n *node, children []arrow.ArrayData) ([]*memory.Buffer, int, error) {
	ut := n.dt.(arrow.UnionType)
	cb := n.cbuffers
	if want, _ := cBuffersOf(n.dt); len(cb) == want+1 {
		cb = cb[1:] // legacy: a validity bitmap that unions no longer have
	}
	if n.a.NullCount > 0 {
		return nil, 0, n.errorf("unions have no validity; null_count is %d", n.a.NullCount)
	}
	if cb[0] == 0 && n.end > 0 {
		return nil, 0, n.errorf("type ids buffer is NULL")
	}
	dense := n.id == arrow.DENSE_UNION
	if dense && cb[1] == 0 && n.end > 0 {
		return nil, 0, n.errorf("offsets buffer is NULL")
	}
	if !dense {
		// Every child, selected or not: arrow-go slices them all.
		for i, c := range children {
			if int64(c.Len()) < n.end {
				return nil, 0, n.errorf("child %d has length %d, shorter than offset+length %d", i, c.Len(), n.end)
			}
		}
	}
	codes := ut.ChildIDs()
	ids := unsafe.Slice((*int8)(abi.Pointer(cb[0])), n.end)
	var offs []int32
	if dense {
		offs = unsafe.Slice((*int32)(abi.Pointer(cb[1])), n.end)
	}
	for i := n.a.Offset; i < n.end; i++ {
		id := ids[i]
		if id < 0 || codes[id] == arrow.InvalidUnionChildID {
			return nil, 0, n.errorf("type id %d at %d is not one of the union's codes", id, i)
		}
		if dense {
			if o, c := offs[i], children[codes[id]]; o < 0 || int(o) >= c.Len() {
				return nil, 0, n.errorf("offset %d at %d is outside child %d of length %d", o, i, codes[id], c.Len())
			}
		}
	}
	var bufs []*memory.Buffer // arrow-go's: nil validity, type ids[, offsets]
	if dense {
		bufs = b.slab.bufferSlice(3)
		bufs[2] = b.wrap(cb[1], n.end*4)
	} else {
		bufs = b.slab.bufferSlice(2)
	}
	bufs[1] = b.wrap(cb[0], n.end)
	return bufs, 0, nil
}

func (n *node) checkRunEnds(children []arrow.ArrayData) error {
	re, vals := children[0], children[1]
	if !arrow.IsInteger(re.DataType().ID()) || re.DataType().ID() == arrow.INT8 || !arrow.IsSignedInteger(re.DataType().ID()) {
		return n.errorf("run ends must be int16, int32 or int64, got %s", re.DataType())
	}
	if re.NullN() != 0 {
		return n.errorf("run ends have nulls")
	}
	if vals.Len() < re.Len() {
		return n.errorf("%d values for %d runs", vals.Len(), re.Len())
	}
	if n.end == 0 {
		return nil
	}
	if re.Len() == 0 {
		return n.errorf("no runs for length %d", n.a.Length)
	}
	last := re.Len() - 1 + re.Offset()
	var v int64
	switch b := re.Buffers()[1].Bytes(); re.DataType().ID() {
	case arrow.INT16:
		v = int64(arrow.Int16Traits.CastFromBytes(b)[last])
	case arrow.INT32:
		v = int64(arrow.Int32Traits.CastFromBytes(b)[last])
	default:
		v = arrow.Int64Traits.CastFromBytes(b)[last]
	}
	if v < n.end {
		return n.errorf("last run end %d is before offset+length %d", v, n.end)
	}
	return nil
}

func offsetWidth(dt arrow.DataType) int64 {
	switch dt.ID() {
	case arrow.LARGE_BINARY, arrow.LARGE_STRING, arrow.LARGE_LIST, arrow.LARGE_LIST_VIEW:
		return 8
	}
	return 4
}

func bitmapBytes(n int64) int64 { return (n + 7) / 8 }
