package dlpack

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
	"github.com/purearrow/cdevice/internal/ndarray"
	"github.com/purearrow/cdevice/internal/sysmem"
)

// An ImportOption changes what Import and ImportLegacy do.
type ImportOption struct{ apply func(*importConfig) }

type importConfig struct {
	allowCopy bool
	ctx       context.Context // the import's: bounds a copy
	typ       arrow.DataType
}

// WithAllowCopy lets Import copy a tensor that cannot be wrapped as it is
// (strides that are not the row-major layout of its Arrow type, or a
// byte_offset that is not a multiple of the element size) into new memory
// on the tensor's device, in row-major order. The tensor's deleter is then
// called before Import returns. Without it such tensors are refused with
// ErrNotContiguous.
func WithAllowCopy() ImportOption {
	return ImportOption{func(c *importConfig) { c.allowCopy = true }}
}

// WithType asks for the Arrow type the tensor becomes instead of the
// default (see the package documentation). Its layout must give the
// tensor's shape and dtype:
//
//   - the tensor's leaf type (1-D), or arrow.FixedWidthTypes.Boolean for a
//     bool tensor, which packs the bytes into bits (always a copy);
//   - fixed_size_list<leaf, n> (2-D [rows, n]), nested fixed_size_lists
//     for more dimensions;
//   - a tensor.FixedShapeType (or any implementation of arrow.fixed_shape_tensor)
//     whose logical shape is the tensor's shape after the first dimension.
//     With a permutation, a tensor whose strides are that permutation of a
//     row-major layout (what Export makes of such an array) is wrapped
//     zero-copy.
func WithType(dt arrow.DataType) ImportOption {
	return ImportOption{func(c *importConfig) { c.typ = dt }}
}

// An owned tensor is one whose deleter an import must call exactly once.
type owned struct {
	self, deleter uintptr
	once          sync.Once
	leak          leak.Object
}

func own(self, deleter uintptr) *owned {
	return &owned{self: self, deleter: deleter, leak: leak.Track(leak.ImportedTensor)}
}

func (o *owned) release() {
	o.once.Do(func() {
		if o.deleter != 0 {
			ffi.Call1(o.deleter, o.self)
		}
		o.leak.Done()
	})
}

// Import makes a DeviceArray of a DLPack 1.x tensor, taking ownership of t:
// its deleter is called exactly once, when the last reference to the
// returned array is released, or before Import returns when the import
// fails or makes a copy. t must not be used after Import.
//
// A 1-D tensor becomes an array of its dtype's Arrow type, an N-D one a
// tensor.FixedShapeType array of N-1 dimensions (rows along the first);
// WithType asks for another type. The array wraps the tensor's memory
// (zero-copy) when the tensor is row-major for that type, with
// byte_offset a multiple of the element size: byte_offset becomes the
// array's offset, so the data pointer stays what the producer gave (a
// cl_mem handle cannot be offset). Other tensors are refused
// (ErrNotContiguous) or, with WithAllowCopy, copied.
//
// A tensor flagged FlagReadOnly imports as any other: Arrow arrays are
// immutable, so nothing in this library writes to an array's memory. The
// flag is kept: exporting the array again (Export) flags the tensor
// read-only even with WithWritable. Code that writes through
// DeviceArray.Buffers breaks that promise.
//
// DLPack carries no sync event: the producer must have finished writing the
// memory (the Python protocol's stream argument arranges this), and Import
// does not wait for anything.
//
// The device is looked up with device.Lookup (DLPack's CPU device_id 0 is
// Arrow's -1); a device with no loaded backend is an error wrapping
// cdevice.ErrUnknownDevice. Other errors wrap cdevice.ErrInvalid (a malformed
// tensor, a WithType that does not fit), cdevice.ErrUnsupported (a dtype
// with no Arrow type, ErrVersion, ErrNotContiguous), cdevice.ErrRuntime (a
// copy's device runtime call failed).
func Import(ctx context.Context, t *ManagedTensorVersioned, opts ...ImportOption) (*cdevice.DeviceArray, error) {
	if t == nil {
		return nil, invalidf("nil DLManagedTensorVersioned")
	}
	o := own(t.Addr(), t.Deleter)
	if t.Version.Major != MajorVersion {
		v := t.Version
		o.release() // the spec's rule: call the deleter, read nothing else
		return nil, fmt.Errorf("%w: tensor has version %d.%d", ErrVersion, v.Major, v.Minor)
	}
	return importTensor(ctx, t.DLTensor, t.Flags, o, opts)
}

// ImportLegacy is Import for the legacy DLManagedTensor, which has no
// version and no flags.
func ImportLegacy(ctx context.Context, t *ManagedTensor, opts ...ImportOption) (*cdevice.DeviceArray, error) {
	if t == nil {
		return nil, invalidf("nil DLManagedTensor")
	}
	return importTensor(ctx, t.DLTensor, 0, own(t.Addr(), t.Deleter), opts)
}

// A tensorDesc is a tensor's fields, read and checked.
type tensorDesc struct {
	data       device.Pointer
	byteOffset int64
	shape      []int64
	strides    []int64 // nil: row-major
	dtype      DataType
	isz, numel int64
	devType    abi.DeviceType
	devID      int64
	dev        device.Device
}

func describe(t *Tensor) (*tensorDesc, error) {
	d := &tensorDesc{data: device.Pointer(t.Data), dtype: t.Dtype}
	switch {
	case t.Ndim == 0:
		return nil, unsupportedf("a 0-dimensional tensor has no Arrow array form")
	case t.Ndim < 0 || t.Ndim > ndarray.MaxDims:
		return nil, invalidf("ndim %d", t.Ndim)
	case t.Shape == 0:
		return nil, invalidf("NULL shape for ndim %d", t.Ndim)
	case t.ByteOffset > math.MaxInt64/2:
		return nil, invalidf("byte_offset %d", t.ByteOffset)
	}
	d.byteOffset = int64(t.ByteOffset)
	d.shape = slices.Clone(t.ShapeSlice())
	d.strides = slices.Clone(t.StridesSlice())
	if _, err := elemOf(d.dtype); err != nil {
		return nil, err
	}
	if d.dtype.Bits%8 != 0 {
		return nil, unsupportedf("dtype %s is not whole bytes", d.dtype)
	}
	d.isz = itemSize(d.dtype)
	var ok bool
	if d.numel, ok = ndarray.Product(d.shape); !ok {
		return nil, invalidf("shape %v", d.shape)
	}
	if n, ok := ndarray.MulNonNeg(d.numel, d.isz); !ok || n > math.MaxInt64-d.byteOffset {
		return nil, invalidf("shape %v: too many elements", d.shape)
	}
	if d.data == 0 && d.numel > 0 {
		return nil, invalidf("NULL data for %d elements", d.numel)
	}
	at := t.Device.DeviceType
	if at == DeviceMAIA || at == DeviceTrn {
		return nil, wrapf(cdevice.ErrUnknownDevice, "dlpack: device type %s has no Arrow device type", dlName(at))
	}
	if !at.Valid() {
		return nil, invalidf("device type %d is not a DLPack device type", int32(at))
	}
	d.devType, d.devID = at, int64(t.Device.DeviceID)
	if at == abi.DeviceCPU {
		d.devID = -1
	}
	dev, err := device.Lookup(at, d.devID)
	if err != nil {
		return nil, fmt.Errorf("dlpack: %w", err) // wraps cdevice.ErrUnknownDevice
	}
	d.dev = dev
	return d, nil
}

// actualStrides are the tensor's strides, row-major when it gave none.
func (d *tensorDesc) actualStrides() []int64 {
	if d.strides != nil {
		return d.strides
	}
	return ndarray.RowMajor(d.shape, 1)
}

func importTensor(ctx context.Context, t Tensor, flags uint64, o *owned, opts []ImportOption) (*cdevice.DeviceArray, error) {
	var cfg importConfig
	for _, opt := range opts {
		if opt.apply != nil {
			opt.apply(&cfg)
		}
	}
	cfg.ctx = ctx
	a, err := importOwned(&t, flags, o, cfg)
	if err != nil {
		o.release()
		return nil, err
	}
	return a, nil
}

func importOwned(t *Tensor, flags uint64, o *owned, cfg importConfig) (*cdevice.DeviceArray, error) {
	d, err := describe(t)
	if err != nil {
		return nil, err
	}
	typ := cfg.typ
	if typ == nil {
		if typ, err = defaultType(d.dtype, d.shape[1:]); err != nil {
			return nil, err
		}
	}
	l, err := layoutOf(typ)
	if err != nil {
		return nil, err
	}
	if inner := l.RowShape(); !slices.Equal(inner, d.shape[1:]) {
		return nil, invalidf("type %s has rows of shape %v, the tensor %v", typ, inner, d.shape[1:])
	}
	if l.dtype != d.dtype {
		return nil, invalidf("type %s has elements of dtype %s, the tensor %s", typ, l.dtype, d.dtype)
	}
	want := l.Strides(1)
	zeroCopy := !l.bits && ndarray.Matches(d.shape, d.actualStrides(), want) && d.byteOffset%d.isz == 0
	switch {
	case zeroCopy:
		return wrap(d, l, flags&FlagReadOnly != 0, o), nil
	case !l.bits && !cfg.allowCopy:
		return nil, fmt.Errorf("%w: shape %v, strides %v, byte_offset %d, %s wants strides %v",
			ErrNotContiguous, d.shape, d.actualStrides(), d.byteOffset, typ, want)
	}
	c, err := copyTensor(cfg.ctx, d, l, want)
	if err != nil {
		return nil, err
	}
	o.release() // the copy no longer needs the producer's memory
	return c, nil
}

// wrap makes the DeviceArray tree over the tensor's memory.
func wrap(d *tensorDesc, l *tensorLayout, readOnlyMem bool, o *owned) *cdevice.DeviceArray {
	leaf := cdevice.DeviceArray{Buffers: []cdevice.DeviceBuffer{{}, {}}, DeviceType: d.devType, DeviceID: d.devID, Device: d.dev}
	if d.numel > 0 {
		leaf.Offset = d.byteOffset / d.isz
		leaf.Buffers[1] = cdevice.DeviceBuffer{Ptr: d.data, Size: d.byteOffset + d.numel*d.isz}
	}
	node := l.Tree(d.shape[0], leaf)
	var root *cdevice.DeviceArray
	release := o.release
	if readOnlyMem {
		release = func() {
			markReadOnly(root, false)
			o.release()
		}
	}
	root = cdevice.NewDeviceArray(*node, release)
	if readOnlyMem {
		markReadOnly(root, true)
	}
	return root
}

// markReadOnly adds a (ro) or removes it, and every node under it, to
// readOnly: a child exports the same memory as its root.
func markReadOnly(a *cdevice.DeviceArray, ro bool) {
	if ro {
		readOnly.Store(a, struct{}{})
	} else {
		readOnly.Delete(a)
	}
	for _, c := range a.Children {
		markReadOnly(c, ro)
	}
}

// copyTensor gathers the tensor's elements into the row-major layout want
// (strides in elements, one per dimension) on the host, makes an array of
// l's type of them, and copies that to the tensor's device.
func copyTensor(ctx context.Context, d *tensorDesc, l *tensorLayout, want []int64) (*cdevice.DeviceArray, error) {
	// Both sizes come from the producer (a broadcast's shape can claim
	// far more elements than its memory holds): an allocation past what
	// the machine has would end the process.
	n := d.numel * d.isz // describe checked it
	if limit, ok := sysmem.Allows(n); !ok {
		return nil, unsupportedf("copying %d elements: %d bytes, more than the %d this process may allocate", d.numel, n, limit)
	}
	out := make([]byte, n)
	if d.numel > 0 {
		s := d.actualStrides()
		sb, ok := ndarray.Scaled(s, d.isz)
		var lo, size int64
		if ok {
			lo, size, ok = ndarray.Extent(d.shape, sb, d.isz) // in bytes
		}
		start := d.byteOffset + lo // byteOffset >= 0 >= lo: no overflow
		if !ok || start < 0 {
			return nil, invalidf("strides %v with byte_offset %d reach outside the buffer", s, d.byteOffset)
		}
		if limit, ok := sysmem.Allows(size); !ok {
			return nil, unsupportedf("strides %v span %d bytes, more than the %d this process may allocate", s, size, limit)
		}
		src := make([]byte, size)
		if err := toHost(d.dev, src, d.data, start); err != nil {
			return nil, err
		}
		wb, _ := ndarray.Scaled(want, d.isz) // row-major of a size that fits
		ndarray.Copy(out, src, d.shape, wb, sb, -lo, d.isz)
	}
	if l.bits {
		out, _ = ndarray.PackBits(out)
	}
	lens, chain := l.Lengths(d.shape[0]), l.Chain()
	data := array.NewData(l.Elem, int(d.numel), []*memory.Buffer{nil, memory.NewBufferBytes(out)}, nil, 0, 0)
	for i := len(l.Levels) - 1; i >= 0; i-- {
		parent := array.NewData(chain[i], int(lens[i]), []*memory.Buffer{nil}, []arrow.ArrayData{data}, 0, 0)
		data.Release()
		data = parent
	}
	arr := array.MakeFromData(data)
	data.Release()
	defer arr.Release()
	return cdevice.CopyToDevice(ctx, arr, d.dev)
}
