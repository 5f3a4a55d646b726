package cai

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ndarray"
)

// An ExportOption changes what Export does.
type ExportOption struct{ apply func(*exportConfig) }

type exportConfig struct {
	stream   device.Stream
	writable bool
}

// WithStream says that work writing the array may still be queued on s, a
// stream of the array's device: the descriptor's Stream names s (its
// handle), so that a consumer synchronizes with it, and the copies Export
// makes (mask, boolean bytes) are queued on s after that work. s must stay
// alive as long as the descriptor may be used.
func WithStream(s device.Stream) ExportOption {
	return ExportOption{func(c *exportConfig) { c.stream = s }}
}

// WithWritable marks the data as writable (read-only false). By default the
// descriptor is read-only: Arrow arrays are immutable, and the memory may
// be shared with other arrays.
func WithWritable() ExportOption { return ExportOption{func(c *exportConfig) { c.writable = true }} }

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
// The descriptor is read-only unless WithWritable, version 3, with Descr [("",
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
		if o.apply != nil {
			o.apply(&cfg)
		}
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
		Shape: l.Shape(l.rows), Typestr: l.typestr, Version: Version,
		Data: Data{ReadOnly: !cfg.writable}, Descr: []Field{{"", l.typestr}}, Stream: stream,
	}
	if l.Permuted() {
		desc.Strides = l.Strides(l.itemsize)
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
	*ndarray.Layout
	rows     int64
	nodes    []ndarray.Node // from the root to the leaf
	typestr  string
	itemsize int64
	bits     bool // boolean leaf: values are bits, copied to bytes
	total    int64
}

func describe(a *cdevice.DeviceArray) (*layout, error) {
	nl, err := ndarray.LayoutOf(a.Type)
	if err != nil {
		return nil, err
	}
	ts, err := Typestr(nl.Elem)
	if err != nil {
		return nil, err
	}
	t, _ := parseTypestr(ts)
	nodes, err := nl.Place(a)
	if err != nil {
		return nil, err
	}
	total, ok := nl.Elements(a.Length)
	if !ok {
		return nil, invalidf("Export: %d rows of shape %v overflow", a.Length, nl.Phys)
	}
	return &layout{Layout: nl, rows: a.Length, nodes: nodes, typestr: ts, itemsize: int64(t.size),
		bits: nl.Elem.ID() == arrow.BOOL, total: total}, nil
}

// An exporter makes the copies a descriptor needs: boolean bytes and the
// mask, on one stream with one synchronization each way.
type exporter struct {
	ctx    context.Context
	e      *Exported
	l      *layout
	stream device.Stream
}

// A download is a bitmap range of a node copied to the host: bit i of the
// node is bit i-first of host; an element of the node covers per leaf
// elements.
type download struct {
	n     ndarray.Node
	per   int64
	host  []byte
	first int64
}

// run fills desc's data pointer and mask, in phases: where the values and
// masks are (plan), the bitmaps brought to the host (download), booleans
// made bytes and the validity of every level folded into one mask (fold),
// and those sent to the device (upload).
func (x *exporter) run(desc *Interface) error {
	l := x.l
	if l.total == 0 {
		return nil // no elements: pointer 0, no mask
	}
	masked, leaf, err := x.plan()
	if err != nil {
		return err
	}
	if !l.bits {
		values := leaf.n.Buffers[1]
		if err := fits(values, (leaf.n.Start+l.total)*l.itemsize, "values"); err != nil {
			return err
		}
		desc.Data.Ptr = uintptr(values.Ptr) + uintptr(leaf.n.Start*l.itemsize)
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
		if s, err = dev.NewStream(); err != nil {
			return err
		}
		defer s.Close()
	}
	if l.bits {
		masked = append(masked, leaf) // the values' bits come last
	}
	if err := x.download(dev, s, masked); err != nil {
		return err
	}
	var bools []byte
	if l.bits {
		bools, masked = x.bytesOf(masked[len(masked)-1]), masked[:len(masked)-1]
	}
	mask := x.fold(masked)
	ptrs, err := x.upload(dev, s, bools, mask)
	if err != nil {
		return err
	}
	if l.bits {
		desc.Data.Ptr = uintptr(ptrs[0])
		ptrs = ptrs[1:]
	}
	if mask != nil {
		m := &Interface{Shape: desc.Shape, Typestr: "|b1", Data: Data{Ptr: uintptr(ptrs[0]), ReadOnly: desc.Data.ReadOnly},
			Version: Version, Descr: []Field{{"", "|b1"}}}
		if l.Permuted() {
			m.Strides = l.Strides(1)
		}
		desc.Mask = m
	}
	return nil
}

// plan finds the nodes whose validity masks elements, and the leaf, whose
// values buffer must be there.
func (x *exporter) plan() (masked []download, leaf download, err error) {
	l := x.l
	for i, n := range l.nodes {
		if len(n.Buffers) > 0 && n.Buffers[0].Ptr != 0 && n.NullCount != 0 {
			masked = append(masked, download{n: n, per: l.Per(i)})
		}
	}
	leaf = download{n: l.nodes[len(l.nodes)-1], per: 1}
	if len(leaf.n.Buffers) < 2 || leaf.n.Buffers[1].Ptr == 0 {
		return nil, leaf, invalidf("Export: the %s values have no buffer", leaf.n.Type)
	}
	return masked, leaf, nil
}

// download copies the bitmap range of each of dls to the host (the leaf's
// values where it is last and the values are bits, else validity), with
// one synchronization.
func (x *exporter) download(dev device.Device, s device.Stream, dls []download) error {
	l := x.l
	for i := range dls {
		d := &dls[i]
		buf, what := d.n.Buffers[0], "validity bitmap"
		if l.bits && i == len(dls)-1 {
			buf, what = d.n.Buffers[1], "values"
		}
		d.first = d.n.Start &^ 7
		n := (d.n.Start+l.total/d.per+7)/8 - d.first/8
		if err := fits(buf, d.first/8+n, what); err != nil {
			return err
		}
		d.host = make([]byte, n)
		if err := dev.CopyToHost(d.host, buf.Ptr, int(d.first/8), s); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	return x.ctx.Err()
}

// bytesOf is the boolean values of d, a byte each.
func (x *exporter) bytesOf(d download) []byte {
	b := make([]byte, x.l.total)
	for i := range b {
		if bitutil.BitIsSet(d.host, int(d.n.Start-d.first)+i) {
			b[i] = 1
		}
	}
	return b
}

// fold is the mask of the leaf's elements, one byte each, 0 where any
// level's validity masks it; nil where nothing is masked.
func (x *exporter) fold(dls []download) []byte {
	if len(dls) == 0 {
		return nil
	}
	mask := make([]byte, x.l.total)
	for i := range mask {
		mask[i] = 1
	}
	for _, d := range dls {
		per := d.per
		for j := range x.l.total / per {
			if !bitutil.BitIsSet(d.host, int(d.n.Start-d.first+j)) {
				clear(mask[j*per : (j+1)*per])
			}
		}
	}
	if allOnes(mask) {
		return nil
	}
	return mask
}

// upload copies the booleans' bytes and the mask (each where not nil), in
// that order, into device memory the export owns, with one
// synchronization.
func (x *exporter) upload(dev device.Device, s device.Stream, parts ...[]byte) ([]device.Pointer, error) {
	var ptrs []device.Pointer
	for _, b := range parts {
		if b == nil {
			continue
		}
		p, err := dev.Alloc(len(b))
		if err != nil {
			return nil, err
		}
		x.e.allocs = append(x.e.allocs, p)
		ptrs = append(ptrs, p)
		if err := dev.CopyToDevice(p, 0, b, s); err != nil {
			return nil, err
		}
	}
	return ptrs, s.Synchronize()
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
