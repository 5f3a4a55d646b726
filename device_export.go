package cdevice

import (
	"context"
	"iter"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/leak"
)

// Export exports the array into out as an ArrowDeviceArray on its device,
// and its type into outSchema when that is not nil. The array is retained
// until the consumer releases out. sync_event is the event recorded after
// the copies that wrote the buffers (NULL on the CPU, and for an imported
// array, whose producer's event the import already waited on).
func (a *DeviceArray) Export(out *abi.DeviceArray, outSchema *abi.Schema) error {
	if out == nil {
		return invalidf("DeviceArray.Export: nil out")
	}
	if outSchema != nil {
		if err := ExportField(arrow.Field{Type: a.Type, Nullable: true}, outSchema); err != nil {
			return err
		}
	}
	exportDeviceTree(a, a, out)
	return nil
}

// exportDeviceTree writes the tree under root into out, retaining source
// (the DeviceArray or DeviceRecordBatch exported) until the last release.
func exportDeviceTree(root *DeviceArray, source interface{ Retain() }, out *abi.DeviceArray) {
	nodes, ptrs := countDevicePtrs(root)
	e := newExport(leak.ExportedArray)
	source.Retain()
	e.source = source
	f := arrayFiller{e: e, sl: newSlab(&e.pin, nodes-1, unsafe.Sizeof(abi.Array{}), ptrs, 0, 0), handle: e.start(nodes)}
	f.fillDevice(root, &out.Array)
	e.arrayRoot = out.Array // for identity imports of the untouched tree
	out.DeviceType, out.DeviceID, out.Reserved = root.DeviceType, root.DeviceID, [3]int64{}
	out.SyncEvent = root.SyncEvent()
}

func countDevicePtrs(a *DeviceArray) (nodes, ptrs int) {
	nodes, ptrs = 1, len(a.Buffers)+len(a.Children)
	for _, c := range a.Children {
		n, p := countDevicePtrs(c)
		nodes, ptrs = nodes+n, ptrs+p
	}
	if a.Dictionary != nil {
		n, p := countDevicePtrs(a.Dictionary)
		nodes, ptrs = nodes+n, ptrs+p
	}
	return nodes, ptrs
}

// fillDevice writes a DeviceArray node: its buffers are device memory,
// which is not Go memory (the CPU device's is pinned by the device).
func (f *arrayFiller) fillDevice(a *DeviceArray, out *abi.Array) {
	*out = abi.Array{
		Length: a.Length, NullCount: a.NullCount, Offset: a.Offset,
		NBuffers: int64(len(a.Buffers)), NChildren: int64(len(a.Children)),
		Release: arrayReleaseCB.Ptr(), PrivateData: f.handle,
	}
	ptrs := f.ptrs(len(a.Buffers) + len(a.Children))
	for i, b := range a.Buffers {
		ptrs[i] = uintptr(b.Ptr)
	}
	if len(a.Buffers) > 0 {
		out.Buffers = uintptr(unsafe.Pointer(&ptrs[0]))
	}
	kids := ptrs[len(a.Buffers):]
	if len(kids) > 0 {
		out.Children = uintptr(unsafe.Pointer(&kids[0]))
	}
	for i, c := range a.Children {
		n := f.newNode()
		kids[i] = uintptr(unsafe.Pointer(n))
		f.fillDevice(c, n)
	}
	if a.Dictionary != nil {
		n := f.newNode()
		out.Dictionary = uintptr(unsafe.Pointer(n))
		f.fillDevice(a.Dictionary, n)
	}
}

// A DeviceRecordBatch is a record batch whose columns live on one device.
// Like a DeviceArray it is owned as a whole; Release frees it.
type DeviceRecordBatch struct {
	Schema  *arrow.Schema
	Length  int64
	Columns []*DeviceArray
	root    *DeviceArray // the struct array that ArrowDeviceArray carries
}

// Retain adds a reference to the batch and all its columns.
func (b *DeviceRecordBatch) Retain() { b.root.Retain() }

// Release drops a reference; the last frees every column.
func (b *DeviceRecordBatch) Release() { b.root.Release() }

// Device is the device the batch lives on (nil: its backend is not loaded).
func (b *DeviceRecordBatch) Device() device.Device { return b.root.Device }

func newDeviceRecordBatch(sc *arrow.Schema, root *DeviceArray) *DeviceRecordBatch {
	return &DeviceRecordBatch{Schema: sc, Length: root.Length, Columns: root.Children, root: root}
}

// CopyRecordBatchToDevice copies every column of rb to newly allocated
// memory on dev, with one synchronization for the whole batch. The copies
// are complete when it returns: rb may be released at once (the result
// holds no reference to it). The result holds one reference; its Export
// carries the event recorded after the copies as sync_event.
func CopyRecordBatchToDevice(ctx context.Context, rb arrow.RecordBatch, dev device.Device) (*DeviceRecordBatch, error) {
	if rb == nil || dev == nil {
		return nil, invalidf("CopyRecordBatchToDevice: nil record batch or device")
	}
	cols, owner, err := copyDataToDevice(ctx, columnData(rb), dev)
	if err != nil {
		return nil, err
	}
	return batchOnDevice(rb.Schema(), rb.NumRows(), cols, owner), nil
}

// CPURecordBatch returns rb as a device record batch on device.CPU without
// copying it: the result's buffers are rb's, pinned, and rb is retained,
// until the result's last reference is released (rb itself may be released
// at once). Its exports hand C pointers into rb's memory, as ExportRecordBatch
// does; CopyRecordBatchToDevice(ctx, rb, device.CPU) copies instead. It is
// how host batches feed a CPU device stream or an async producer for free.
func CPURecordBatch(rb arrow.RecordBatch) (*DeviceRecordBatch, error) {
	if rb == nil {
		return nil, invalidf("CPURecordBatch: nil record batch")
	}
	cols, owner, err := shareDataOnCPU(columnData(rb))
	if err != nil {
		return nil, err
	}
	return batchOnDevice(rb.Schema(), rb.NumRows(), cols, owner), nil
}

// columnData returns the data of rb's columns.
func columnData(rb arrow.RecordBatch) []arrow.ArrayData {
	ds := make([]arrow.ArrayData, rb.NumCols())
	for i, c := range rb.Columns() {
		ds[i] = c.Data()
	}
	return ds
}

// batchOnDevice makes the device record batch of columns cols on owner's
// device. The root takes the owner even with no columns: its one reference
// (and its event, if any) are released with the batch.
func batchOnDevice(sc *arrow.Schema, rows int64, cols []*DeviceArray, owner *deviceOwner) *DeviceRecordBatch {
	dev := owner.dev
	root := &DeviceArray{
		Type: structOf(sc), Length: rows,
		Buffers: make([]DeviceBuffer, 1), Children: cols,
		DeviceType: dev.Type(), DeviceID: dev.ID(), Device: dev, owner: owner,
	}
	return newDeviceRecordBatch(sc, rootOf(root))
}

// ToHost copies the batch into Go memory.
func (b *DeviceRecordBatch) ToHost(ctx context.Context) (arrow.RecordBatch, error) {
	h, err := download(ctx, b.root)
	if err != nil {
		return nil, err
	}
	return ImportRecordBatchWithSchema(&h.root, b.Schema)
}

// Export exports the batch into out as a struct-typed ArrowDeviceArray, and
// its schema into outSchema when that is not nil.
func (b *DeviceRecordBatch) Export(out *abi.DeviceArray, outSchema *abi.Schema) error {
	if out == nil {
		return invalidf("DeviceRecordBatch.Export: nil out")
	}
	if outSchema != nil {
		if err := ExportSchema(b.Schema, outSchema); err != nil {
			return err
		}
	}
	exportDeviceTree(b.root, b, out)
	return nil
}

// CopyReaderToDevice returns the batches of rdr copied onto dev one by one,
// as the sequence is iterated; each yielded batch belongs to the caller.
// rdr is retained until the sequence ends.
func CopyReaderToDevice(ctx context.Context, rdr array.RecordReader, dev device.Device) iter.Seq2[*DeviceRecordBatch, error] {
	return func(yield func(*DeviceRecordBatch, error) bool) {
		if rdr == nil || dev == nil {
			yield(nil, invalidf("CopyReaderToDevice: nil reader or device"))
			return
		}
		rdr.Retain()
		defer rdr.Release()
		for rdr.Next() {
			db, err := CopyRecordBatchToDevice(ctx, rdr.RecordBatch(), dev)
			if !yield(db, err) || err != nil {
				return
			}
		}
		if err := rdr.Err(); err != nil {
			yield(nil, err)
		}
	}
}
