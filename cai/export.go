package cai

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/device"
)

// An ExportOption changes what Export does.
type ExportOption func(*exportConfig)

type exportConfig struct {
	stream   device.Stream
	writable bool
}

// WithStream says that work writing the array may still be queued on s, a
// stream of the array's device: the descriptor's Stream names s (its
// handle), so that a consumer synchronizes with it, and the copies Export
// makes (mask, boolean bytes) are queued on s after that work. s must stay
// alive as long as the descriptor may be used.
func WithStream(s device.Stream) ExportOption { return func(c *exportConfig) { c.stream = s } }

// Writable marks the data as writable (read-only false). By default the
// descriptor is read-only: Arrow arrays are immutable, and the memory may
// be shared with other arrays.
func Writable() ExportOption { return func(c *exportConfig) { c.writable = true } }

// An Exported is a DeviceArray described by a CUDA Array Interface
// descriptor. The interface has no owner slot: the Exported is what keeps
// the memory alive, holding a reference to the array, and owning the
// copies that the descriptor points to (mask, boolean bytes), until
// Release.
type Exported struct {
	// Interface is the descriptor (see Export).
	Interface Interface

	arr      *cdevice.DeviceArray
	dev      device.Device
	allocs   []device.Pointer // on dev
	released atomic.Bool
}

// Release drops the reference to the array and frees the copies; the
// descriptor must not be used after. Later calls do nothing.
func (e *Exported) Release() {
	if e == nil || e.released.Swap(true) {
		return
	}
	for _, p := range e.allocs {
		e.dev.Free(p)
	}
	e.allocs = nil
	e.arr.Release()
}

// Export describes a DeviceArray of CUDA memory (device types CUDA,
// CUDA_HOST, CUDA_MANAGED; others are refused with ErrNotCUDA) by a CUDA
// Array Interface descriptor:
//
//   - a fixed-width primitive array (see Typestr) is 1-D, zero-copy: the
//     data pointer is the values buffer plus Offset elements;
//   - fixed_size_list<T, n> is 2-D (length, n), nested fixed-size lists
//     more dimensions, zero-copy;
//   - arrow.fixed_shape_tensor is (length, logical shape...), zero-copy,
//     with strides when it has a permutation;
//   - boolean values are bits in Arrow and bytes in the interface: they are
//     copied into new device memory as "|b1" (arrow.bool8 is zero-copy);
//   - nulls (validity bitmaps at any level) become the Mask, a "|b1" array
//     of the same shape, copied into new device memory: 1 valid, 0 null.
//     An element of a list or tensor is null where it or its row is. No
//     Mask when there are no nulls.
//
// The descriptor is read-only unless Writable, version 3, with Descr [("",
// typestr)]. Its Stream follows this rule: a DeviceArray of this module is
// complete when it is handed out (CopyToDevice and the importers wait for
// the work that wrote it), and Export waits for its own copies, so Stream
// is nil (no synchronization needed) unless the caller names the stream of
// work it queued itself with WithStream: then Stream is that stream's
// handle.
//
// The result holds a reference to a until Release.
func Export(ctx context.Context, a *cdevice.DeviceArray, opts ...ExportOption) (*Exported, error) {
	var cfg exportConfig
	for _, o := range opts {
		o(&cfg)
	}
	if a == nil {
		return nil, invalidf("Export: nil array")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !cudaFamily(a.DeviceType) {
		return nil, fmt.Errorf("%w: the array is on %s:%d", ErrNotCUDA, a.DeviceType, a.DeviceID)
	}
	var stream *int64
	if cfg.stream != nil {
		h := int64(cfg.stream.Handle())
		if h <= 0 {
			return nil, invalidf("Export: the stream's handle is %d; the interface names streams by positive values", h)
		}
		stream = &h
	}
	l, err := describe(a)
	if err != nil {
		return nil, err
	}
	e := &Exported{arr: a, dev: a.Device}
	desc := Interface{
		Shape: l.shape(), Typestr: l.typestr, Version: Version,
		Data: Data{ReadOnly: !cfg.writable}, Descr: []Field{{"", l.typestr}}, Stream: stream,
	}
	if l.permuted() {
		desc.Strides = l.strides(l.itemsize)
	}
	x := exporter{ctx: ctx, e: e, l: l, stream: cfg.stream}
	if err := x.run(&desc); err != nil {
		for _, p := range e.allocs {
			e.dev.Free(p)
		}
		return nil, err
	}
	a.Retain()
	e.Interface = desc
	return e, nil
}

// A layout is a DeviceArray seen as an N-D array.
type layout struct {
	rows     int64
	phys     []int64 // physical dimensions of a row, outermost first
	logical  []int   // logical dimension i of a row is phys[logical[i]]
	levels   []level // root first, leaf last
	leaf     *cdevice.DeviceArray
	typestr  string
	itemsize int64
	bits     bool // boolean leaf: values are bits, copied to bytes
	total    int64
}

// A level is one node on the path from the root to the leaf.
type level struct {
	node  *cdevice.DeviceArray
	start int64 // index of the first element in the node's own coordinates (Offset included)
	above int   // physical dimensions above the node's elements
	per   int64 // leaf elements per element of the node
}

const maxDims = 64

func describe(a *cdevice.DeviceArray) (*layout, error) {
	l := &layout{rows: a.Length}
	if a.Length < 0 || a.Offset < 0 {
		return nil, invalidf("Export: length %d, offset %d", a.Length, a.Offset)
	}
	node, start := a, a.Offset
	for {
		if len(l.levels) > maxDims {
			return nil, unsupportedf("more than %d dimensions", maxDims)
		}
		l.levels = append(l.levels, level{node: node, start: start, above: len(l.phys)})
		var listSize int64
		switch t := node.Type.(type) {
		case *arrow.FixedSizeListType:
			l.logical = append(l.logical, len(l.phys))
			l.phys = append(l.phys, int64(t.Len()))
			listSize = int64(t.Len())
		case arrow.ExtensionType:
			if isBool8(t) {
				break // a leaf: int8 storage, zero-copy as |b1
			}
			if t.ExtensionName() != TensorExtensionName {
				return nil, unsupportedf("extension type %s has no CUDA Array Interface form", t.ExtensionName())
			}
			md, err := parseTensorMetadata(t.Serialize())
			if err != nil {
				return nil, err
			}
			fsl, ok := t.StorageType().(*arrow.FixedSizeListType)
			if !ok {
				return nil, invalidf("%s: storage %s is not a fixed_size_list", t, t.StorageType())
			}
			tt, err := NewFixedShapeTensorType(fsl.Elem(), md.Shape, md.Permutation, nil)
			if err != nil {
				return nil, err
			}
			if fsl.Len() != tt.Storage.(*arrow.FixedSizeListType).Len() {
				return nil, invalidf("%s: storage %s does not hold shape %v", t, fsl, md.Shape)
			}
			base := len(l.phys)
			for i := range md.Shape {
				p := i
				if md.Permutation != nil {
					p = int(md.Permutation[i])
				}
				l.logical = append(l.logical, base+p)
			}
			l.phys = append(l.phys, md.Shape...)
			listSize = int64(fsl.Len())
		}
		if node.Type.ID() != arrow.FIXED_SIZE_LIST && (node.Type.ID() != arrow.EXTENSION || isBool8(node.Type)) {
			ts, err := Typestr(node.Type)
			if err != nil {
				return nil, err
			}
			t, _ := parseTypestr(ts)
			l.typestr, l.leaf, l.itemsize = ts, node, int64(t.size)
			l.bits = node.Type.ID() == arrow.BOOL
			break
		}
		if len(node.Children) != 1 || node.Children[0] == nil {
			return nil, invalidf("Export: a %s node with %d children", node.Type, len(node.Children))
		}
		child := node.Children[0]
		if child.Offset < 0 || listSize > 0 && start > (math.MaxInt64-child.Offset)/listSize {
			return nil, invalidf("Export: child offset %d", child.Offset)
		}
		node, start = child, start*listSize+child.Offset
	}
	l.total = l.rows
	for _, n := range l.phys {
		if n != 0 && l.total > math.MaxInt64/n {
			return nil, invalidf("Export: %d rows of shape %v overflow", l.rows, l.phys)
		}
		l.total *= n
	}
	for i := range l.levels {
		l.levels[i].per = 1
		for _, n := range l.phys[l.levels[i].above:] {
			l.levels[i].per *= n
		}
	}
	return l, nil
}

// isBool8 reports whether dt is the canonical arrow.bool8 extension (int8
// storage, one byte a boolean), whichever package implements it.
func isBool8(dt arrow.DataType) bool {
	t, ok := dt.(arrow.ExtensionType)
	return ok && t.ExtensionName() == "arrow.bool8" && t.StorageType().ID() == arrow.INT8
}

// shape is the logical shape: rows, then each logical dimension.
func (l *layout) shape() []int64 {
	s := []int64{l.rows}
	for _, p := range l.logical {
		s = append(s, l.phys[p])
	}
	return s
}

// permuted reports whether logical and physical dimensions differ in order.
func (l *layout) permuted() bool {
	for i, p := range l.logical {
		if p != i {
			return true
		}
	}
	return false
}

// strides are the logical strides of the physical row-major layout, for
// elements of itemsize bytes.
func (l *layout) strides(itemsize int64) []int64 {
	ps := cStrides(append([]int64{l.rows}, l.phys...), itemsize)
	s := []int64{ps[0]}
	for _, p := range l.logical {
		s = append(s, ps[1+p])
	}
	return s
}

// An exporter makes the copies a descriptor needs: boolean bytes and the
// mask, on one stream with one synchronization each way.
type exporter struct {
	ctx    context.Context
	e      *Exported
	l      *layout
	stream device.Stream
}

// A download is a bitmap range copied to the host: bit i of the node is
// bit i-first of host.
type download struct {
	lv    level
	host  []byte
	first int64
}

func (x *exporter) run(desc *Interface) error {
	l := x.l
	if l.total == 0 {
		return nil // no elements: pointer 0, no mask
	}
	var masked []level
	for _, lv := range l.levels {
		if len(lv.node.Buffers) > 0 && lv.node.Buffers[0].Ptr != 0 && lv.node.NullCount != 0 {
			masked = append(masked, lv)
		}
	}
	leaf := l.levels[len(l.levels)-1]
	if len(l.leaf.Buffers) < 2 || l.leaf.Buffers[1].Ptr == 0 {
		return invalidf("Export: the %s values have no buffer", l.leaf.Type)
	}
	values := l.leaf.Buffers[1]
	if !l.bits {
		if err := fits(values, (leaf.start+l.total)*l.itemsize, "values"); err != nil {
			return err
		}
		desc.Data.Ptr = uintptr(values.Ptr) + uintptr(leaf.start*l.itemsize)
		if len(masked) == 0 {
			return nil
		}
	}
	dev := x.e.dev
	if dev == nil {
		return cdevice.ErrNotReadable
	}
	s := x.stream
	if s == nil {
		var err error
		if s, err = dev.NewStream(); err != nil {
			return err
		}
		defer s.Close()
	}
	var dls []download
	get := func(lv level, buf cdevice.DeviceBuffer, count int64, what string) error {
		first := lv.start &^ 7
		n := (lv.start+count+7)/8 - first/8
		if err := fits(buf, first/8+n, what); err != nil {
			return err
		}
		d := download{lv: lv, host: make([]byte, n), first: first}
		dls = append(dls, d)
		return dev.CopyToHost(d.host, buf.Ptr, int(first/8), s)
	}
	for _, lv := range masked {
		if err := get(lv, lv.node.Buffers[0], l.total/lv.per, "validity bitmap"); err != nil {
			return err
		}
	}
	if l.bits {
		if err := get(leaf, values, l.total, "values"); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	if err := x.ctx.Err(); err != nil {
		return err
	}
	var upload [][]byte
	if l.bits {
		d := dls[len(dls)-1]
		b := make([]byte, l.total)
		for i := range b {
			if bit(d.host, d.lv.start-d.first+int64(i)) {
				b[i] = 1
			}
		}
		upload = append(upload, b)
		dls = dls[:len(dls)-1]
	}
	var mask []byte
	for _, d := range dls {
		if mask == nil {
			mask = make([]byte, l.total)
			for i := range mask {
				mask[i] = 1
			}
		}
		per := d.lv.per
		for j := range l.total / per {
			if !bit(d.host, d.lv.start-d.first+j) {
				clear(mask[j*per : (j+1)*per])
			}
		}
	}
	if mask != nil && !allOnes(mask) {
		upload = append(upload, mask)
	} else {
		mask = nil
	}
	ptrs := make([]device.Pointer, len(upload))
	for i, b := range upload {
		p, err := dev.Alloc(len(b))
		if err != nil {
			return err
		}
		x.e.allocs = append(x.e.allocs, p)
		ptrs[i] = p
		if err := dev.CopyToDevice(p, 0, b, s); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	if l.bits {
		desc.Data.Ptr = uintptr(ptrs[0])
		ptrs = ptrs[1:]
	}
	if mask != nil {
		m := &Interface{Shape: desc.Shape, Typestr: "|b1", Data: Data{Ptr: uintptr(ptrs[0]), ReadOnly: desc.Data.ReadOnly},
			Version: Version, Descr: []Field{{"", "|b1"}}}
		if l.permuted() {
			m.Strides = l.strides(1)
		}
		desc.Mask = m
	}
	return nil
}

// fits checks that a buffer of known size holds n bytes.
func fits(b cdevice.DeviceBuffer, n int64, what string) error {
	if b.Size >= 0 && b.Size < n {
		return invalidf("Export: the %s buffer has %d bytes, %d needed", what, b.Size, n)
	}
	return nil
}

func allOnes(b []byte) bool {
	for _, v := range b {
		if v == 0 {
			return false
		}
	}
	return true
}
