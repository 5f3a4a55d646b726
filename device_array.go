package cdevice

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
)

// A DeviceBuffer is one buffer of a DeviceArray: device memory and its size
// in bytes. Ptr is 0 for a buffer the array does not have (a validity bitmap
// when there are no nulls, or an empty buffer). Size is -1 when it is not
// known (an imported array whose device has no loaded backend).
type DeviceBuffer struct {
	Ptr  device.Pointer
	Size int64
}

// A DeviceArray is an Arrow array whose buffers live on a device: the tree
// an ArrowDeviceArray describes, with buffers in ArrowArray order (no
// validity bitmap for unions, variadic buffer sizes last for views) and
// their sizes.
//
// The tree is owned as a whole: Release on the root frees what CopyToDevice
// allocated, or calls the producer's release for an imported array, when the
// last reference goes. Children and Dictionary belong to the root: Retain
// on one of them keeps the whole tree, and its Release gives back only what
// its own Retain took (a child never releases the root's reference).
type DeviceArray struct {
	Type       arrow.DataType
	Length     int64
	Offset     int64
	NullCount  int64 // -1: not known
	Buffers    []DeviceBuffer
	Children   []*DeviceArray
	Dictionary *DeviceArray

	DeviceType abi.DeviceType
	DeviceID   int64
	// Device is the backend that reads and frees the buffers; nil for an
	// imported array whose backend is not loaded: its data cannot be read.
	Device device.Device

	owner *deviceOwner // shared by the whole tree
	holds int32        // a child's: references its Retain took (atomic; 32-bit so any field alignment will do)
}

// ErrNotReadable: a DeviceArray's data must be read but its device has no
// loaded backend. It wraps ErrUnknownDevice.
var ErrNotReadable = fmt.Errorf("%w: the array's device has no loaded backend to read it", ErrUnknownDevice)

// deviceOwner holds what a DeviceArray tree rests on: the memory that
// CopyToDevice allocated, or the imported ArrowDeviceArray, and the event
// recorded after the copies that wrote the buffers.
type deviceOwner struct {
	refs      atomic.Int64
	dev       device.Device
	allocs    []DeviceBuffer // memory from allocDevice
	event     device.Event
	imp       *arrayImport
	onRelease func()            // NewDeviceArray's release
	shared    []arrow.ArrayData // host data whose buffers the tree shares (CPURecordBatch)
	pin       runtime.Pinner    // those buffers, while C may read them through an export
	leak      leak.Object
	root      *DeviceArray // the node whose Release drops the tree's own references
}

func newDeviceOwner(dev device.Device) *deviceOwner {
	o := &deviceOwner{dev: dev}
	o.refs.Store(1)
	o.leak = leak.Track(leak.DeviceArray)
	return o
}

func (o *deviceOwner) release() {
	if o.refs.Add(-1) != 0 {
		return
	}
	if o.event != nil {
		o.event.Close()
	}
	for _, b := range o.allocs {
		freeDevice(o.dev, b.Ptr, b.Size)
	}
	if o.imp != nil {
		o.imp.release()
	}
	if o.onRelease != nil {
		o.onRelease()
	}
	o.pin.Unpin()
	for _, d := range o.shared {
		d.Release()
	}
	o.leak.Done()
}

// Retain adds a reference to the whole tree.
func (a *DeviceArray) Retain() {
	if a != a.owner.root {
		atomic.AddInt32(&a.holds, 1)
	}
	a.owner.refs.Add(1)
}

// Release drops a reference; the last frees the tree. On a child it drops
// one that the child's Retain took, and does nothing when there is none.
func (a *DeviceArray) Release() {
	if a != a.owner.root {
		for {
			h := atomic.LoadInt32(&a.holds)
			if h <= 0 {
				return
			}
			if atomic.CompareAndSwapInt32(&a.holds, h, h-1) {
				break
			}
		}
	}
	a.owner.release()
}

// rootOf makes a the root of its owner's tree and returns it.
func rootOf(a *DeviceArray) *DeviceArray {
	a.owner.root = a
	return a
}

// SyncEvent is the sync_event an ArrowDeviceArray export of the tree
// carries: the event recorded after the copies that wrote its buffers (a
// cudaEvent_t*, hipEvent_t* or cl_event*, valid while the tree is
// retained), or 0 when there is none (the CPU, imported arrays, whose
// producer's event the import already waited on, and NewDeviceArray's).
func (a *DeviceArray) SyncEvent() uintptr {
	if a.owner == nil || a.owner.event == nil {
		return 0
	}
	return a.owner.event.SyncEvent()
}

// CopyToDevice copies arr to newly allocated memory on dev. It returns when
// the copies are complete.
func CopyToDevice(ctx context.Context, arr arrow.Array, dev device.Device) (*DeviceArray, error) {
	if arr == nil || dev == nil {
		return nil, invalidf("CopyToDevice: nil array or device")
	}
	as, _, err := copyDataToDevice(ctx, []arrow.ArrayData{arr.Data()}, dev)
	if err != nil {
		return nil, err
	}
	return rootOf(as[0]), nil
}

// copyDataToDevice copies the trees in ds to dev with one stream, one event
// and one synchronization. The results share owner, which holds one
// reference and the event: whoever roots them must take owner, even when
// ds is empty and no result refers to it.
func copyDataToDevice(ctx context.Context, ds []arrow.ArrayData, dev device.Device) (out []*DeviceArray, owner *deviceOwner, err error) {
	u := upload{ctx: ctx, dev: dev, owner: newDeviceOwner(dev)}
	defer u.pin.Unpin()
	if u.stream, err = dev.NewStream(); err != nil {
		u.owner.release()
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			u.stream.Synchronize() // no copy may still read pinned memory
			u.owner.release()
		}
		u.stream.Close()
	}()
	out = make([]*DeviceArray, len(ds))
	for i, d := range ds {
		if out[i], err = u.node(d, 0); err != nil {
			return nil, nil, err
		}
	}
	if u.owner.event, err = dev.NewEvent(); err != nil {
		return nil, nil, err
	}
	if err = u.owner.event.Record(u.stream); err != nil {
		return nil, nil, err
	}
	if err = u.owner.event.Synchronize(); err != nil {
		return nil, nil, err
	}
	return out, u.owner, nil
}

// shareDataOnCPU is copyDataToDevice for device.CPU without the copies:
// the arrays point at ds's buffers, which their owner pins and retains
// (CPURecordBatch).
func shareDataOnCPU(ds []arrow.ArrayData) ([]*DeviceArray, *deviceOwner, error) {
	u := upload{ctx: context.Background(), dev: device.CPU, owner: newDeviceOwner(device.CPU), share: true}
	out := make([]*DeviceArray, len(ds))
	for i, d := range ds {
		var err error
		if out[i], err = u.node(d, 0); err != nil {
			u.owner.release() // unpins, and releases what it retained so far
			return nil, nil, err
		}
		d.Retain()
		u.owner.shared = append(u.owner.shared, d)
	}
	return out, u.owner, nil
}

type upload struct {
	ctx    context.Context
	dev    device.Device
	stream device.Stream
	owner  *deviceOwner
	pin    runtime.Pinner // host buffers an asynchronous copy may still read
	share  bool           // device.CPU, no copy: the tree points at the host buffers
}

func (u *upload) node(d arrow.ArrayData, depth int) (*DeviceArray, error) {
	if depth > maxDepth {
		return nil, invalidf("array nesting deeper than %d", maxDepth)
	}
	if err := u.ctx.Err(); err != nil {
		return nil, err
	}
	nb, nsizes := cBufferCount(d)
	a := &DeviceArray{
		Type: d.DataType(), Length: int64(d.Len()), Offset: int64(d.Offset()), NullCount: int64(d.NullN()),
		Buffers:    make([]DeviceBuffer, nb),
		DeviceType: u.dev.Type(), DeviceID: u.dev.ID(), Device: u.dev, owner: u.owner,
	}
	var err error
	forEachCBuffer(d, make([]int64, nsizes), func(i int, b []byte) {
		if err != nil || len(b) == 0 {
			return
		}
		if u.share {
			u.owner.pin.Pin(&b[0])
			a.Buffers[i] = DeviceBuffer{Ptr: device.Pointer(unsafe.Pointer(&b[0])), Size: int64(len(b))}
			return
		}
		var p device.Pointer
		if p, err = allocDevice(u.dev, len(b)); err != nil {
			return
		}
		a.Buffers[i] = DeviceBuffer{Ptr: p, Size: int64(len(b))}
		u.owner.allocs = append(u.owner.allocs, a.Buffers[i])
		u.pin.Pin(&b[0])
		err = u.dev.CopyToDevice(p, 0, b, u.stream)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range d.Children() {
		k, err := u.node(c, depth+1)
		if err != nil {
			return nil, err
		}
		a.Children = append(a.Children, k)
	}
	if dict := dictionaryOf(d); dict != nil {
		if a.Dictionary, err = u.node(dict, depth+1); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// ToHost copies the array into Go memory and returns it as an arrow.Array,
// validated as an import from C would be.
func (a *DeviceArray) ToHost(ctx context.Context) (arrow.Array, error) {
	h, err := download(ctx, a)
	if err != nil {
		return nil, err
	}
	return ImportArrayWithType(&h.root, a.Type)
}

// CopyTo copies the array to newly allocated memory on dev, through host
// memory.
func (a *DeviceArray) CopyTo(ctx context.Context, dev device.Device) (*DeviceArray, error) {
	host, err := a.ToHost(ctx)
	if err != nil {
		return nil, err
	}
	defer host.Release()
	return CopyToDevice(ctx, host, dev)
}

// A hostCopy is a DeviceArray copied into Go memory, described by an
// ArrowArray tree in Go memory so that the CPU importer (layout, checks,
// zero-copy wrapping) makes arrow-go values of it. None of it reaches C:
// its release callback is ours, called directly by the importer.
type hostCopy struct {
	root  abi.Array
	nodes []abi.Array
	ptrs  [][]uintptr // the trees' pointer arrays, kept reachable
	bufs  [][]byte
}

// The importer calls this when the last arrow-go reference to a host copy
// goes: its buffers go back to the memory cache.
var hostCopyReleaseCB = ffi.NewCallback1("host copy release", func(p uintptr) uintptr {
	a := (*abi.Array)(abi.Pointer(p))
	if v, ok := ffi.Handle(a.PrivateData).Delete(); ok {
		if h, ok := v.(*hostCopy); ok {
			h.free()
		}
	}
	a.Release, a.PrivateData = 0, 0
	return 0
})

func (h *hostCopy) free() {
	for _, b := range h.bufs {
		freeHost(b)
	}
	h.bufs = nil
}

// download copies every buffer of a to Go memory on one stream with one
// synchronization.
func download(ctx context.Context, a *DeviceArray) (*hostCopy, error) {
	if a.Device == nil {
		return nil, ErrNotReadable
	}
	s, err := a.Device.NewStream()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	d := downloader{ctx: ctx, s: s, h: &hostCopy{nodes: make([]abi.Array, countNodes(a)-1)}}
	defer d.pin.Unpin()
	d.handle = uintptr(ffi.NewHandle(d.h))
	err = d.node(a, &d.h.root)
	if serr := s.Synchronize(); err == nil {
		err = serr
	}
	if err != nil {
		ffi.Handle(d.handle).Delete()
		d.h.free()
		return nil, err
	}
	return d.h, nil
}

func countNodes(a *DeviceArray) int {
	n := 1
	for _, c := range a.Children {
		n += countNodes(c)
	}
	if a.Dictionary != nil {
		n += countNodes(a.Dictionary)
	}
	return n
}

type downloader struct {
	ctx    context.Context
	s      device.Stream
	h      *hostCopy
	handle uintptr
	next   int
	pin    runtime.Pinner // host buffers an asynchronous copy may still write
}

func (d *downloader) node(a *DeviceArray, out *abi.Array) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	if a.Device == nil {
		return ErrNotReadable
	}
	ptrs := make([]uintptr, len(a.Buffers)+len(a.Children))
	d.h.ptrs = append(d.h.ptrs, ptrs)
	*out = abi.Array{Length: a.Length, NullCount: a.NullCount, Offset: a.Offset,
		NBuffers: int64(len(a.Buffers)), NChildren: int64(len(a.Children)),
		Release: hostCopyReleaseCB.Ptr(), PrivateData: d.handle}
	if len(a.Buffers) > 0 {
		out.Buffers = uintptr(unsafe.Pointer(&ptrs[0]))
	}
	for i, b := range a.Buffers {
		switch {
		case b.Ptr == 0 || b.Size == 0:
		case b.Size < 0:
			return ErrNotReadable
		default:
			host := allocHost(b.Size)
			d.pin.Pin(&host[0])
			d.h.bufs = append(d.h.bufs, host)
			if err := a.Device.CopyToHost(host, b.Ptr, 0, d.s); err != nil {
				return err
			}
			ptrs[i] = uintptr(unsafe.Pointer(&host[0]))
		}
	}
	kids := ptrs[len(a.Buffers):]
	if len(kids) > 0 {
		out.Children = uintptr(unsafe.Pointer(&kids[0]))
	}
	for i, c := range a.Children {
		n := &d.h.nodes[d.next]
		d.next++
		kids[i] = uintptr(unsafe.Pointer(n))
		if err := d.node(c, n); err != nil {
			return err
		}
	}
	if a.Dictionary != nil {
		n := &d.h.nodes[d.next]
		d.next++
		out.Dictionary = uintptr(unsafe.Pointer(n))
		return d.node(a.Dictionary, n)
	}
	return nil
}

// NewDeviceArray makes a DeviceArray tree of foreign device memory from a
// (its exported fields, children and dictionary filled in by the caller).
// release, when not nil, is called exactly once, when the last reference to
// the tree is released: DLPack's deleter or a CUDA Array Interface owner's
// release, say. The result holds one reference.
func NewDeviceArray(a DeviceArray, release func()) *DeviceArray {
	o := newDeviceOwner(a.Device)
	o.onRelease = release
	root := &a
	setOwner(root, o)
	return rootOf(root)
}

func setOwner(a *DeviceArray, o *deviceOwner) {
	a.owner = o
	for _, c := range a.Children {
		setOwner(c, o)
	}
	if a.Dictionary != nil {
		setOwner(a.Dictionary, o)
	}
}
