package dlpack

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
	"github.com/purearrow/cdevice/internal/ndarray"
)

// An ExportOption changes what Export and ExportLegacy do.
type ExportOption struct{ apply func(*exportConfig) }

type exportConfig struct {
	fill      *float64
	stream    uintptr
	hasStream bool
	writable  bool
}

// WithNullFill exports an array with nulls as a copy (FlagIsCopied) in which
// every null element, and every element of a null list, is v converted to
// the element type. v must be representable exactly for integer types
// (booleans: v != 0 is true). An array without nulls is still exported
// zero-copy.
func WithNullFill(v float64) ExportOption {
	return ExportOption{func(c *exportConfig) { c.fill = &v }}
}

// NoSync, as the consumer stream, asks for no synchronization at all (the
// Python protocol's stream=-1).
const NoSync = ^uintptr(0)

// WithStreamHandle names, by its raw handle (as the Python protocol's
// __dlpack__(stream=...) passes it), the stream on which the consumer will
// use the tensor (a cudaStream_t or hipStream_t; a cl_command_queue for
// OpenCL).
// Before Export returns, work the consumer queues on s is made to come after
// the work that wrote the array (the array's ready event):
//
//   - CPU arrays have no event; the stream is ignored.
//   - On a device that takes foreign streams (device.ForeignStreams: the
//     CUDA, HIP and OpenCL backends), s waits for the event on the device
//     (cudaStreamWaitEvent, clEnqueueBarrierWithWaitList) without blocking
//     the host. An OpenCL queue of another context cannot have our
//     cl_event in its wait list: the host waits for it instead.
//   - On other devices, and for s == 0, Export waits for the event on the
//     host: correct for any consumer stream, at the cost of blocking the
//     caller.
//   - Arrays from cdevice.CopyToDevice are complete when it returns, and
//     imported arrays were waited for at import: their event (if any) has
//     already completed and the wait costs little.
//   - NoSync skips all of this.
//
// A stream handle that is not one of the device's runtime is the caller's
// error: the runtime may refuse it (Export fails) or crash.
func WithStreamHandle(s uintptr) ExportOption {
	return ExportOption{func(c *exportConfig) { c.stream, c.hasStream = s, true }}
}

// WithWritable leaves FlagReadOnly clear on a zero-copy export, for
// consumers that refuse read-only tensors. Arrow arrays are immutable and
// their buffers may be shared with other arrays: a consumer that writes
// through such a tensor changes them all. Memory that came from a DLPack
// tensor flagged read-only stays read-only. Legacy exports have no flags.
func WithWritable() ExportOption {
	return ExportOption{func(c *exportConfig) { c.writable = true }}
}

// An exported tensor: what its deleter gives back.
type exported struct {
	arr   *cdevice.DeviceArray // retained (zero-copy) or owned (a copy)
	block unsafe.Pointer       // the C struct with shape and strides
	leak  leak.Object
}

var (
	// exportTable maps the address of every live exported struct to the
	// handle in its manager_ctx. The deleter looks its argument up here, so
	// a second call (or a call with garbage) finds nothing and reads no
	// freed memory.
	exportTable = struct {
		sync.Mutex
		live map[uintptr]ffi.Handle
	}{live: map[uintptr]ffi.Handle{}}

	// deleterCalls counts every call of our deleter (for tests).
	deleterCalls atomic.Int64

	// readOnly holds the roots of zero-copy imports of read-only tensors.
	readOnly sync.Map // *cdevice.DeviceArray → struct{}
)

// The deleter of every tensor we export (both struct kinds: it only needs
// the struct's address).
var deleterCB = ffi.NewCallback1("dlpack: tensor deleter", func(self uintptr) uintptr {
	deleteExport(self)
	return 0
})

func deleteExport(self uintptr) {
	deleterCalls.Add(1)
	exportTable.Lock()
	h, ok := exportTable.live[self]
	delete(exportTable.live, self)
	exportTable.Unlock()
	if !ok {
		leak.StrayDLPackDeletes.Add(1) // cdevice.LiveLeaks().StrayDeletes
		return
	}
	v, _ := h.Delete()
	e := v.(*exported)
	e.arr.Release()
	ffi.Free(e.block)
	e.leak.Done()
}

// Delete calls the tensor's deleter (when it has one), as a consumer that is
// done with it must. t must not be used afterwards.
func (t *ManagedTensorVersioned) Delete() {
	if t != nil && t.Deleter != 0 {
		ffi.Call1(t.Deleter, t.Addr())
	}
}

// Delete calls the tensor's deleter (when it has one). t must not be used
// afterwards.
func (t *ManagedTensor) Delete() {
	if t != nil && t.Deleter != 0 {
		ffi.Call1(t.Deleter, t.Addr())
	}
}

// Export describes a as a DLPack 1.x tensor in C memory, for a consumer
// that takes ownership of it and calls its deleter exactly once. See the
// package documentation for the types and what is zero-copy.
//
// A zero-copy tensor points at a's values buffer (byte_offset is a's offset
// in bytes: device pointers, SVM pointers and cl_mem handles alike), is
// flagged FlagReadOnly (unless WithWritable) and keeps a retained until the
// deleter runs. A copy (booleans, nulls with WithNullFill) is new memory on
// a's device, flagged FlagIsCopied, freed by the deleter.
//
// Errors wrap cdevice.ErrUnsupported (a type that is not a tensor, ErrNulls),
// cdevice.ErrInvalid (a malformed DeviceArray), cdevice.ErrUnknownDevice (a
// copy is needed but a's device has no loaded backend) or cdevice.ErrRuntime
// (a device runtime call failed).
func Export(ctx context.Context, a *cdevice.DeviceArray, opts ...ExportOption) (*ManagedTensorVersioned, error) {
	p, err := export(ctx, a, true, opts)
	if err != nil {
		return nil, err
	}
	return (*ManagedTensorVersioned)(p), nil
}

// ExportLegacy is Export for consumers of the legacy DLManagedTensor
// (DLPack before 1.0). It cannot say that the tensor is read-only or a
// copy; treat it as read-only unless it was a copy.
func ExportLegacy(ctx context.Context, a *cdevice.DeviceArray, opts ...ExportOption) (*ManagedTensor, error) {
	p, err := export(ctx, a, false, opts)
	if err != nil {
		return nil, err
	}
	return (*ManagedTensor)(p), nil
}

func export(ctx context.Context, a *cdevice.DeviceArray, versioned bool, opts []ExportOption) (unsafe.Pointer, error) {
	var cfg exportConfig
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&cfg)
		}
	}
	if a == nil {
		return nil, invalidf("nil DeviceArray")
	}
	l, err := layoutOf(a.Type)
	if err != nil {
		return nil, err
	}
	nodes, err := l.Place(a)
	if err != nil {
		return nil, err
	}
	leaf := nodes[len(nodes)-1]
	if len(leaf.Buffers) != 2 {
		return nil, invalidf("%s node has %d buffers, want 2", l.Elem, len(leaf.Buffers))
	}
	numel, ok := l.Elements(a.Length)
	if !ok {
		return nil, invalidf("%d rows of %d elements overflow", a.Length, l.Row)
	}
	nulls, err := anyNulls(nodes)
	if err != nil {
		return nil, err
	}
	if nulls && cfg.fill == nil {
		return nil, fmt.Errorf("%w: %s array of length %d", ErrNulls, a.Type, a.Length)
	}
	src := a
	var data device.Pointer
	var byteOffset, flags uint64
	if l.bits || nulls {
		if src, err = denseCopy(ctx, a, l, numel, cfg.fill); err != nil {
			return nil, err
		}
		data, flags = src.Buffers[1].Ptr, FlagIsCopied
	} else {
		isz := itemSize(l.dtype)
		if b := leaf.Buffers[1]; numel > 0 && (b.Ptr == 0 || b.Size >= 0 && (leaf.Start+numel)*isz > b.Size) {
			return nil, invalidf("values buffer %#x of %d bytes does not hold elements [%d, %d)", uintptr(b.Ptr), b.Size, leaf.Start, leaf.Start+numel)
		}
		if numel > 0 {
			data, byteOffset = leaf.Buffers[1].Ptr, uint64(leaf.Start*isz)
		}
		if _, ro := readOnly.Load(a); ro || !cfg.writable {
			flags = FlagReadOnly
		}
		a.Retain()
	}
	dev, err := dlDevice(src)
	if err == nil && cfg.hasStream && cfg.stream != NoSync {
		err = waitConsumer(ctx, src, cfg.stream)
	}
	if err != nil {
		src.Release()
		return nil, err
	}

	ndim := 1 + len(l.Logical)
	hdr := unsafe.Sizeof(ManagedTensor{})
	if versioned {
		hdr = unsafe.Sizeof(ManagedTensorVersioned{})
	}
	hdr = (hdr + 7) &^ 7
	block, err := ffi.Calloc(hdr + 16*uintptr(ndim))
	if err != nil {
		src.Release()
		return nil, fmt.Errorf("%w: dlpack: %w", cdevice.ErrRuntime, err) // keeps the allocator's error in the chain
	}
	shape := unsafe.Slice((*int64)(unsafe.Add(block, hdr)), ndim)
	strides := unsafe.Slice((*int64)(unsafe.Add(block, hdr+8*uintptr(ndim))), ndim)
	copy(shape, l.Shape(a.Length))
	copy(strides, l.Strides(1))
	h := ffi.NewHandle(&exported{arr: src, block: block, leak: leak.Track(leak.ExportedTensor)})
	t := Tensor{
		Data: uintptr(data), Device: dev, Ndim: int32(ndim), Dtype: l.dtype,
		Shape: uintptr(unsafe.Pointer(&shape[0])), Strides: uintptr(unsafe.Pointer(&strides[0])),
		ByteOffset: byteOffset,
	}
	if versioned {
		*(*ManagedTensorVersioned)(block) = ManagedTensorVersioned{
			Version:    PackVersion{Major: MajorVersion, Minor: MinorVersion},
			ManagerCtx: uintptr(h), Deleter: deleterCB.Ptr(), Flags: flags, DLTensor: t,
		}
	} else {
		*(*ManagedTensor)(block) = ManagedTensor{DLTensor: t, ManagerCtx: uintptr(h), Deleter: deleterCB.Ptr()}
	}
	exportTable.Lock()
	exportTable.live[uintptr(block)] = h
	exportTable.Unlock()
	return block, nil
}

// dlDevice is the DLPack device of a: the same type number; Arrow's CPU
// device_id -1 is DLPack's 0.
func dlDevice(a *cdevice.DeviceArray) (Device, error) {
	if a.DeviceType == abi.DeviceCPU {
		return Device{DeviceType: abi.DeviceCPU}, nil
	}
	if !a.DeviceType.Valid() {
		return Device{}, invalidf("device type %d", int32(a.DeviceType))
	}
	if a.DeviceID < 0 || a.DeviceID > math.MaxInt32 {
		return Device{}, invalidf("device id %d of %s does not fit DLPack's int32", a.DeviceID, a.DeviceType)
	}
	return Device{DeviceType: a.DeviceType, DeviceID: int32(a.DeviceID)}, nil
}

// anyNulls reports whether a node of the chain may hold a null: a positive
// null count, or an unknown one (-1) whose bitmap has a zero bit. A node's
// nulls count even where they lie outside the slice the tensor covers.
func anyNulls(chain []ndarray.Node) (bool, error) {
	for _, n := range chain {
		if n.NullCount == 0 || n.Length == 0 || len(n.Buffers) == 0 || n.Buffers[0].Ptr == 0 {
			continue
		}
		if n.NullCount > 0 || n.Device == nil {
			return true, nil
		}
		k, err := countNulls(n.DeviceArray)
		if err != nil || k > 0 {
			return true, err
		}
	}
	return false, nil
}

// countNulls reads the validity bitmap of n from its device.
func countNulls(n *cdevice.DeviceArray) (int64, error) {
	first, end := n.Offset/8, (n.Offset+n.Length+7)/8
	buf := make([]byte, end-first)
	if err := toHost(n.Device, buf, n.Buffers[0].Ptr, first); err != nil {
		return 0, err
	}
	set := 0
	for i := n.Offset; i < n.Offset+n.Length; i++ {
		if bitutil.BitIsSet(buf, int(i-first*8)) {
			set++
		}
	}
	return n.Length - int64(set), nil
}

// toHost copies len(dst) bytes at src+off from dev and waits for them.
func toHost(dev device.Device, dst []byte, src device.Pointer, off int64) error {
	if len(dst) == 0 {
		return nil
	}
	if off > math.MaxInt {
		return invalidf("offset %d", off)
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	pin.Pin(&dst[0])
	defer pin.Unpin()
	err = dev.CopyToHost(dst, src, int(off), s)
	if serr := s.Synchronize(); err == nil {
		err = serr
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// denseCopy copies the numel elements of a, in row-major physical order,
// with nulls replaced by fill and booleans as bytes, to new memory on a's
// device: a DeviceArray of one primitive node that the caller owns.
func denseCopy(ctx context.Context, a *cdevice.DeviceArray, l *tensorLayout, numel int64, fill *float64) (*cdevice.DeviceArray, error) {
	isz := itemSize(l.dtype)
	if numel > math.MaxInt/isz {
		return nil, unsupportedf("%d elements do not fit this platform's memory", numel)
	}
	var fb []byte
	if fill != nil {
		var err error
		if fb, err = fillBytes(l.Elem, *fill); err != nil {
			return nil, err
		}
	}
	host, err := a.ToHost(ctx)
	if err != nil {
		return nil, err
	}
	defer host.Release()
	f := flattener{out: make([]byte, numel*isz), isz: isz, fill: fb}
	f.walk(host.Data(), 0, int64(host.Len()), false)
	if f.pos != int64(len(f.out)) {
		return nil, invalidf("copied %d bytes of %d", f.pos, len(f.out))
	}
	carrier := storageOf(l.Elem)
	if l.bits {
		carrier = arrow.PrimitiveTypes.Uint8
	}
	d := array.NewData(carrier, int(numel), []*memory.Buffer{nil, memory.NewBufferBytes(f.out)}, nil, 0, 0)
	arr := array.MakeFromData(d)
	d.Release()
	defer arr.Release()
	return cdevice.CopyToDevice(ctx, arr, a.Device)
}

func storageOf(dt arrow.DataType) arrow.DataType {
	for dt.ID() == arrow.EXTENSION {
		dt = dt.(arrow.ExtensionType).StorageType()
	}
	return dt
}

// fillBytes is v as one element of type dt, or an error if v is not exactly
// representable there.
func fillBytes(dt arrow.DataType, v float64) ([]byte, error) {
	st := storageOf(dt)
	if dt.ID() == arrow.EXTENSION || st.ID() == arrow.BOOL { // bool8 or Boolean: one byte
		if v != 0 {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	}
	b := make([]byte, st.(arrow.FixedWidthDataType).BitWidth()/8)
	ne := binary.NativeEndian
	switch st.ID() {
	case arrow.FLOAT16:
		ne.PutUint16(b, float16.New(float32(v)).Uint16())
		return b, nil
	case arrow.FLOAT32:
		ne.PutUint32(b, math.Float32bits(float32(v)))
		return b, nil
	case arrow.FLOAT64:
		ne.PutUint64(b, math.Float64bits(v))
		return b, nil
	}
	w := uint(len(b) * 8)
	signed := st.ID() == arrow.INT8 || st.ID() == arrow.INT16 || st.ID() == arrow.INT32 || st.ID() == arrow.INT64
	var u uint64
	switch {
	case v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v):
		return nil, invalidf("null fill %v is not an integer (%s)", v, dt)
	case signed && (v < -math.Ldexp(1, int(w-1)) || v >= math.Ldexp(1, int(w-1))),
		!signed && (v < 0 || v >= math.Ldexp(1, int(w))):
		return nil, invalidf("null fill %v is out of range for %s", v, dt)
	case signed:
		u = uint64(int64(v))
	default:
		u = uint64(v)
	}
	switch len(b) {
	case 1:
		b[0] = byte(u)
	case 2:
		ne.PutUint16(b, uint16(u))
	case 4:
		ne.PutUint32(b, uint32(u))
	default:
		ne.PutUint64(b, u)
	}
	return b, nil
}

// A flattener writes the elements of an array tree in row-major order.
type flattener struct {
	out  []byte
	pos  int64
	isz  int64
	fill []byte // nil: no nulls expected
}

func (f *flattener) put(b []byte) {
	copy(f.out[f.pos:f.pos+f.isz], b)
	f.pos += f.isz
}

// walk writes elements [start, start+count) of d (logical indices, d's
// offset not yet applied); null: an enclosing list is null.
func (f *flattener) walk(d arrow.ArrayData, start, count int64, null bool) {
	st := storageOf(d.DataType())
	off := int64(d.Offset())
	var valid []byte
	if d.NullN() != 0 && len(d.Buffers()) > 0 && d.Buffers()[0] != nil {
		valid = d.Buffers()[0].Bytes()
	}
	isNull := func(i int64) bool { return null || valid != nil && !bitutil.BitIsSet(valid, int(off+i)) }
	switch st.ID() {
	case arrow.FIXED_SIZE_LIST:
		n := int64(st.(*arrow.FixedSizeListType).Len())
		child := d.Children()[0]
		for i := start; i < start+count; i++ {
			f.walk(child, (off+i)*n, n, isNull(i))
		}
	case arrow.BOOL:
		vals := d.Buffers()[1].Bytes()
		for i := start; i < start+count; i++ {
			switch {
			case isNull(i):
				f.put(f.fill)
			case bitutil.BitIsSet(vals, int(off+i)):
				f.put([]byte{1})
			default:
				f.put([]byte{0})
			}
		}
	default:
		vals := d.Buffers()[1].Bytes()
		if !null && valid == nil {
			n := copy(f.out[f.pos:], vals[(off+start)*f.isz:(off+start+count)*f.isz])
			f.pos += int64(n)
			return
		}
		for i := start; i < start+count; i++ {
			if isNull(i) {
				f.put(f.fill)
			} else {
				f.put(vals[(off+i)*f.isz : (off+i+1)*f.isz])
			}
		}
	}
}

// waitConsumer makes work on stream s come after a's ready event (see
// WithStreamHandle).
func waitConsumer(ctx context.Context, a *cdevice.DeviceArray, s uintptr) error {
	ev := a.SyncEvent()
	if a.DeviceType == abi.DeviceCPU || ev == 0 {
		return nil
	}
	if a.Device == nil {
		return fmt.Errorf("%w: dlpack: cannot wait for the ready event of a %s array", cdevice.ErrNotReadable, a.DeviceType)
	}
	if fs, ok := a.Device.(device.ForeignStreams); ok && s != 0 {
		return fs.MakeStreamWait(s, ev)
	}
	return a.Device.WaitSyncEvent(ctx, ev, nil)
}
