package cai

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ndarray"
	"github.com/purearrow/cdevice/internal/sysmem"
	"github.com/purearrow/cdevice/tensor"
)

// An ImportOption changes what Import does.
type ImportOption struct{ apply func(*importConfig) }

type importConfig struct {
	dev          device.Device
	owner        any
	hasOwner     bool
	allowCopy    bool
	ignoreStream bool
	stream       device.Stream
}

// WithDevice names the device whose memory the descriptor points to. The
// interface carries no device: by default it is cuda:0, the device CUDA
// makes current when a program has not chosen one (device.Lookup(
// abi.DeviceCUDA, 0)). Pass the cuda_managed or cuda_host device of the
// same GPU for managed or pinned host memory.
func WithDevice(d device.Device) ImportOption {
	return ImportOption{func(c *importConfig) { c.dev = d }}
}

// WithOwner gives Import what keeps the memory alive: a value with a
// Release() method, or a func(). It is called exactly once, when the
// last reference to the imported array is released. When Import fails it
// is not called: the caller still holds it.
func WithOwner(owner any) ImportOption {
	return ImportOption{func(c *importConfig) { c.owner, c.hasOwner = owner, true }}
}

// WithAllowCopy lets Import copy a strided array that no Arrow layout
// describes into new, row-major device memory (through host memory),
// instead of refusing it with ErrUnsupported.
func WithAllowCopy() ImportOption { return ImportOption{func(c *importConfig) { c.allowCopy = true }} }

// WithIgnoreStream skips the synchronization with the producer's stream that
// the interface asks for: the caller has synchronized already, or takes
// the risk of reading data still being written.
func WithIgnoreStream() ImportOption {
	return ImportOption{func(c *importConfig) { c.ignoreStream = true }}
}

// WithConsumerStream makes s, a stream of the device, wait for the
// producer's stream instead of the host: Import does not block, and the
// caller must then touch the data only through work queued on s (or after
// s is synchronized). Import still waits on the host when it copies the
// data itself (masks, booleans, strided copies).
func WithConsumerStream(s device.Stream) ImportOption {
	return ImportOption{func(c *importConfig) { c.stream = s }}
}

// Import makes a DeviceArray of the memory a CUDA Array Interface
// descriptor describes, on a CUDA device (WithDevice; others are refused
// with ErrNotCUDA). The element type is ArrowType(d.Typestr), and:
//
//   - a 1-D array is a primitive array, zero-copy;
//   - a 2-D array (n, k) is a fixed_size_list<T, k> of length n, zero-copy;
//   - an N-D array (n, d1, ..., dm) is an arrow.fixed_shape_tensor of shape
//     (d1, ..., dm) and length n, zero-copy; strides that lay each row out
//     as a dense row-major tensor of permuted dimensions are kept zero-copy
//     as the tensor's permutation;
//   - other strided arrays are refused with ErrUnsupported, or copied into
//     row-major memory with WithAllowCopy;
//   - "|b1" (bytes) is copied into Arrow's boolean bits;
//   - the mask is copied into a validity bitmap: of the array for 1-D, of
//     the list or tensor values otherwise;
//   - a 0-D array, a dimension of length 0 after the first (arrow-go has
//     no fixed_size_list of size 0), structured types (Descr with named
//     fields) and types ArrowType refuses are refused with ErrUnsupported.
//
// The stream rules of version 3: with a Stream (and a mask's Stream), the
// host waits for the work queued on it before Import returns (stream 0 is
// refused, 1 is the legacy default stream, 2 the per-thread default stream
// of the OS thread Import runs on, other values a cudaStream_t), unless
// WithConsumerStream or WithIgnoreStream say otherwise. The device waits
// through its runtime (device.ForeignStreams, which the CUDA backend's
// devices implement); other devices cannot wait for a stream and are
// refused with ErrUnsupported.
//
// The descriptor owns nothing: the memory must outlive the array, which
// WithOwner arranges. The array's release (NewDeviceArray's) frees the
// copies Import made and then releases the owner.
func Import(ctx context.Context, d *Interface, opts ...ImportOption) (*cdevice.DeviceArray, error) {
	var cfg importConfig
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&cfg)
		}
	}
	release, err := ownerFunc(cfg.owner, cfg.hasOwner)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if len(d.Shape) == 0 {
		return nil, unsupportedf("a 0-d array (a scalar) has no Arrow array form")
	}
	t, _ := parseTypestr(d.Typestr)
	elem, err := t.arrow()
	if err != nil {
		return nil, err
	}
	if d.Descr != nil && (len(d.Descr) != 1 || d.Descr[0].Name != "") {
		return nil, unsupportedf("structured types (descr %v)", d.Descr)
	}
	if d.Descr != nil && d.Descr[0].Typestr != d.Typestr {
		return nil, invalidf("descr typestr %q differs from typestr %q", d.Descr[0].Typestr, d.Typestr)
	}
	dev := cfg.dev
	if dev == nil {
		if dev, err = device.Lookup(abi.DeviceCUDA, 0); err != nil {
			return nil, fmt.Errorf("cai: the descriptor's device: %w (pass WithDevice)", err)
		}
	}
	if !cudaFamily(dev.Type()) {
		return nil, fmt.Errorf("%w: device %s:%d", ErrNotCUDA, dev.Type(), dev.ID())
	}
	for _, n := range d.Shape[1:] {
		if n > math.MaxInt32 {
			return nil, unsupportedf("dimension of %d elements: Arrow fixed-size lists hold at most 2^31-1", n)
		}
		if n == 0 {
			return nil, unsupportedf("shape %v: arrow-go has no fixed_size_list of size 0", d.Shape)
		}
	}
	if total := d.Len(); total > math.MaxInt || total*int64(t.size) > math.MaxInt {
		return nil, unsupportedf("%d elements do not fit this machine's int", total)
	}

	im := importer{ctx: ctx, d: d, dev: dev, t: t, elem: elem, cfg: &cfg}
	root, err := im.run()
	if im.s != nil {
		if cerr := im.s.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		im.free()
		return nil, err
	}
	allocs := im.allocs
	return cdevice.NewDeviceArray(*root, func() {
		for _, p := range allocs {
			dev.Free(p)
		}
		if release != nil {
			release()
		}
	}), nil
}

// ownerFunc turns WithOwner's value into a function.
func ownerFunc(owner any, given bool) (func(), error) {
	switch o := owner.(type) {
	case nil:
		if given {
			return nil, invalidf("WithOwner(nil)")
		}
		return nil, nil
	case func():
		if o == nil {
			return nil, invalidf("WithOwner: nil func")
		}
		return o, nil
	case interface{ Release() }:
		return o.Release, nil
	}
	return nil, invalidf("WithOwner: a %T has no Release method and is not a func()", owner)
}

// An importer builds the array, making what copies it needs on one stream
// with one synchronization each way.
type importer struct {
	ctx    context.Context
	d      *Interface
	dev    device.Device
	t      dtype
	elem   arrow.DataType
	cfg    *importConfig
	s      device.Stream
	allocs []device.Pointer
}

func (im *importer) free() {
	for _, p := range im.allocs {
		im.dev.Free(p)
	}
	im.allocs = nil
}

// A fetch is the span of a strided array copied to the host.
type fetch struct {
	host []byte
	base int64 // the first element's index in host
}

// run builds the array, in phases: its Arrow type and whether its data
// can be used in place (plan), the wait for the producer, then where it
// cannot (or the values are bits, or there is a mask) the host copies,
// repacked into Arrow's layout and sent back to the device (copyIn).
func (im *importer) run() (*cdevice.DeviceArray, error) {
	d, item := im.d, int64(im.t.size)
	lay, zeroCopy, err := im.plan()
	if err != nil {
		return nil, err
	}
	bits := im.t.kind == 'b'
	copies := bits || !zeroCopy || d.Mask != nil
	if err := im.sync(copies); err != nil {
		return nil, err
	}
	if err := im.ctx.Err(); err != nil {
		return nil, err
	}
	total := d.Len()
	values := cdevice.DeviceBuffer{Ptr: device.Pointer(d.Data.Ptr), Size: total * item}
	var validity cdevice.DeviceBuffer
	var nulls int64
	switch {
	case total == 0:
		values = cdevice.DeviceBuffer{}
	case copies:
		var vals *cdevice.DeviceBuffer
		if vals, validity, nulls, err = im.copyIn(lay, bits || !zeroCopy); err != nil {
			return nil, err
		}
		if vals != nil {
			values = *vals
		}
	}
	dev := im.dev
	return lay.Tree(d.Shape[0], cdevice.DeviceArray{NullCount: nulls, Buffers: []cdevice.DeviceBuffer{validity, values},
		DeviceType: dev.Type(), DeviceID: dev.ID(), Device: dev}), nil
}

// plan is the array's Arrow layout (a fixed-size list for two dimensions,
// a fixed-shape tensor for more, its physical shape and permutation where
// the strides permute the dimensions), and whether the data is usable in
// place: contiguous, or a permutation a tensor type describes.
func (im *importer) plan() (lay *ndarray.Layout, zeroCopy bool, err error) {
	d, item := im.d, int64(im.t.size)
	shape := d.Shape
	var phys, perm []int64 // a zero-copy tensor's physical row shape and permutation
	zeroCopy = true
	switch {
	case d.Len() == 0 || contiguous(shape, d.Strides, item):
	case len(shape) >= 3:
		phys, perm, zeroCopy = permuted(shape, d.Strides, item) // nil, nil, false where they do not

	default:
		zeroCopy = false
	}
	if !zeroCopy && !im.cfg.allowCopy && im.t.kind != 'b' {
		return nil, false, unsupportedf("strides %v of shape %v (%d-byte elements) have no zero-copy Arrow layout; pass WithAllowCopy to copy", d.Strides, shape, item)
	}
	typ := im.elem
	switch {
	case len(shape) == 2:
		typ = arrow.FixedSizeListOf(int32(shape[1]), im.elem)
	case len(shape) >= 3:
		if phys == nil {
			phys = shape[1:]
		}
		tt, err := tensor.NewFixedShapeType(im.elem, phys, perm, nil)
		if err != nil {
			return nil, false, unsupportedf("shape %v: %v", shape, err)
		}
		typ = tt
	}
	lay, err = ndarray.LayoutOf(typ)
	return lay, zeroCopy, err
}

// copyIn fetches the values (where copyValues) and the mask to the host
// with one synchronization, repacks them into lay's row-major order
// (booleans as bits, the mask as a validity bitmap, kept only where it
// masks something), and uploads them with one more.
func (im *importer) copyIn(lay *ndarray.Layout, copyValues bool) (values *cdevice.DeviceBuffer, validity cdevice.DeviceBuffer, nulls int64, err error) {
	d, item := im.d, int64(im.t.size)
	var vals, mask *fetch
	if copyValues {
		if vals, err = im.get(d, item); err != nil {
			return nil, validity, 0, err
		}
	}
	if d.Mask != nil {
		if mask, err = im.get(d.Mask, 1); err != nil {
			return nil, validity, 0, err
		}
	}
	if err := im.s.Synchronize(); err != nil {
		return nil, validity, 0, err
	}
	var uploads [][]byte
	if vals != nil {
		b, err := repack(vals, d, d, lay, item)
		if err != nil {
			return nil, validity, 0, err
		}
		if im.t.kind == 'b' {
			b, _ = ndarray.PackBits(b)
		}
		uploads = append(uploads, b)
	}
	if mask != nil {
		b, err := repack(mask, d, d.Mask, lay, 1)
		if err != nil {
			return nil, validity, 0, err
		}
		var bm []byte
		if bm, nulls = ndarray.PackBits(b); nulls > 0 {
			uploads = append(uploads, bm)
		}
	}
	ptrs, err := im.upload(uploads)
	if err != nil {
		return nil, validity, 0, err
	}
	if vals != nil {
		values = &cdevice.DeviceBuffer{Ptr: ptrs[0], Size: int64(len(uploads[0]))}
		ptrs, uploads = ptrs[1:], uploads[1:]
	}
	if nulls > 0 {
		validity = cdevice.DeviceBuffer{Ptr: ptrs[0], Size: int64(len(uploads[0]))}
	}
	return values, validity, nulls, nil
}

// repack copies what f fetched of x (the data d's values, or its mask:
// item-byte elements of d's shape) into lay's row-major order.
func repack(f *fetch, d, x *Interface, lay *ndarray.Layout, item int64) ([]byte, error) {
	total := d.Len()
	if err := allocatable(total * item); err != nil {
		return nil, err
	}
	b := make([]byte, total*item)
	ndarray.Copy(b, f.host, d.Shape, lay.Strides(item), strides(x, item), f.base, item)
	return b, nil
}

// strides are a descriptor's strides, the row-major ones when it has none.
func strides(d *Interface, item int64) []int64 {
	if d.Strides != nil {
		return d.Strides
	}
	return ndarray.RowMajor(d.Shape, item)
}

// sync waits for the producer's streams (the data's and the mask's): on
// the host when Import copies, else on the consumer stream if there is one.
func (im *importer) sync(copies bool) error {
	if im.cfg.ignoreStream {
		return nil
	}
	var s device.Stream
	if !copies {
		s = im.cfg.stream
	}
	var done []int64
	for _, x := range []*Interface{im.d, im.d.Mask} {
		if x == nil || x.Stream == nil {
			continue
		}
		v := *x.Stream
		if contains(done, v) {
			continue
		}
		done = append(done, v)
		if err := waitStream(im.dev, v, s); err != nil {
			return fmt.Errorf("cai: waiting for the producer's stream %#x: %w", v, err)
		}
	}
	return nil
}

func contains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// allocatable is nil when n bytes, a size the producer's shape and strides
// decide (a broadcast's shape may claim far more than its memory holds),
// may be allocated on the host: past what the machine has, the allocation
// would end the process.
func allocatable(n int64) error {
	if limit, ok := sysmem.Allows(n); !ok {
		return fmt.Errorf("%w: cai: copying needs %d bytes, more than the %d this process may allocate", cdevice.ErrUnsupported, n, limit)
	}
	return nil
}

// stream returns the importer's stream, made on first use.
func (im *importer) stream() (device.Stream, error) {
	if im.s == nil {
		s, err := im.dev.NewStream()
		if err != nil {
			return nil, err
		}
		im.s = s
	}
	return im.s, nil
}

// get queues the copy of the span of x (elements of item bytes) to the
// host.
func (im *importer) get(x *Interface, item int64) (*fetch, error) {
	lo, size, ok := ndarray.Extent(x.Shape, strides(x, item), item)
	if !ok || size > math.MaxInt {
		return nil, invalidf("strides %v of shape %v overflow", x.Strides, x.Shape)
	}
	if err := allocatable(size); err != nil {
		return nil, err
	}
	f := &fetch{host: make([]byte, size), base: -lo}
	s, err := im.stream()
	if err != nil {
		return nil, err
	}
	src := device.Pointer(uintptr(int64(x.Data.Ptr) + lo))
	return f, im.dev.CopyToHost(f.host, src, 0, s)
}

// upload copies each of bufs to new device memory and waits.
func (im *importer) upload(bufs [][]byte) ([]device.Pointer, error) {
	ptrs := make([]device.Pointer, len(bufs))
	for i, b := range bufs {
		if len(b) == 0 {
			continue
		}
		p, err := im.dev.Alloc(len(b))
		if err != nil {
			return nil, err
		}
		im.allocs = append(im.allocs, p)
		ptrs[i] = p
		if err := im.dev.CopyToDevice(p, 0, b, im.s); err != nil {
			return nil, err
		}
	}
	return ptrs, im.s.Synchronize()
}
