package cdevice

import (
	"encoding/binary"
	"errors"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// ImportDeviceArrayOnDevice imports an ArrowDeviceArray of any device type,
// leaving its buffers where they are. It waits on the producer's sync_event
// first, then checks the tree's structure and finds the size of every buffer,
// reading the values that sizes depend on (last offsets of binary arrays,
// variadic buffer sizes of views) from the device in one batch with one
// synchronization. The schema is released at once; arr when the returned
// array is released.
//
// When no loaded backend owns the array's device, it imports as metadata:
// sizes that depend on device contents are -1, and reading the data fails
// with ErrNotReadable.
//
// WithContext bounds the wait for the producer's sync_event. The data
// stays on the device, so WithFullValidation applies when it is brought to
// the host (ImportDeviceArray does; else ValidateFull on ToHost's result).
func ImportDeviceArrayOnDevice(arr *abi.DeviceArray, schema *abi.Schema, opts ...ImportOption) (*DeviceArray, error) {
	f, err := ImportField(schema)
	if err != nil {
		ReleaseDeviceArray(arr)
		return nil, err
	}
	return importDeviceTree(arr, f.Type, applyImportOptions(opts))
}

// ImportDeviceRecordBatchOnDevice imports a struct-typed ArrowDeviceArray
// and its schema as a DeviceRecordBatch, leaving the buffers where they are,
// as ImportDeviceArrayOnDevice does (ImportDeviceRecordBatch brings the
// batch to host memory).
func ImportDeviceRecordBatchOnDevice(arr *abi.DeviceArray, schema *abi.Schema, opts ...ImportOption) (*DeviceRecordBatch, error) {
	sc, err := ImportSchema(schema)
	if err != nil {
		ReleaseDeviceArray(arr)
		return nil, err
	}
	return ImportDeviceRecordBatchOnDeviceWithSchema(arr, sc, opts...)
}

// ImportDeviceRecordBatchOnDeviceWithSchema is
// ImportDeviceRecordBatchOnDevice with a schema already imported (a
// stream's).
func ImportDeviceRecordBatchOnDeviceWithSchema(arr *abi.DeviceArray, sc *arrow.Schema, opts ...ImportOption) (*DeviceRecordBatch, error) {
	if sc == nil {
		ReleaseDeviceArray(arr)
		return nil, invalidf("nil schema")
	}
	if arr != nil && arr.Array.Release != 0 {
		// Our own untouched export: hand back the batch itself.
		if b, ok := exportedSource(&arr.Array).(*DeviceRecordBatch); ok && b.Schema == sc &&
			arr.DeviceType == b.root.DeviceType && arr.DeviceID == b.root.DeviceID {
			b.Retain()
			ReleaseArray(&arr.Array)
			return b, nil
		}
	}
	root, err := importDeviceTree(arr, structOf(sc), applyImportOptions(opts))
	if err != nil {
		return nil, err
	}
	if root.NullCount > 0 {
		root.Release()
		return nil, invalidf("a record batch's struct array has %d nulls", root.NullCount)
	}
	return newDeviceRecordBatch(sc, root), nil
}

func importDeviceTree(arr *abi.DeviceArray, dt arrow.DataType, cfg importConfig) (*DeviceArray, error) {
	if arr == nil {
		return nil, invalidf("nil ArrowDeviceArray")
	}
	if arr.Array.Release == 0 {
		return nil, ErrReleased
	}
	if !arr.DeviceType.Valid() {
		ReleaseArray(&arr.Array)
		return nil, invalidf("unknown device type %d", int32(arr.DeviceType))
	}
	dev, lookupErr := device.Lookup(arr.DeviceType, arr.DeviceID)
	if lookupErr != nil && !errors.Is(lookupErr, device.ErrUnknownDevice) {
		ReleaseArray(&arr.Array)
		return nil, lookupErr
	}
	if dev != nil {
		// Nothing is read before the producer's work is done.
		if err := dev.WaitSyncEvent(cfg.context(), arr.SyncEvent, nil); err != nil {
			ReleaseArray(&arr.Array)
			return nil, err
		}
	}
	imp, err := startImport(&arr.Array)
	if err != nil {
		return nil, err
	}
	t := deviceTree{dev: dev, typ: arr.DeviceType, id: arr.DeviceID, owner: newDeviceOwner(dev)}
	t.owner.imp = imp
	root, err := t.node(&imp.c, dt, 0)
	if err == nil {
		err = t.resolveSizes()
	}
	if err != nil {
		t.owner.release() // releases the producer's tree
		return nil, err
	}
	return rootOf(root), nil
}

// deviceTree builds a DeviceArray over an imported tree.
type deviceTree struct {
	dev   device.Device // nil: no backend
	typ   abi.DeviceType
	id    int64
	owner *deviceOwner
	nodes []deviceNode // in build order, for resolveSizes
	reads []deviceRead
}

type deviceNode struct {
	n   node
	out *DeviceArray
}

// A deviceRead is one value a buffer size depends on.
type deviceRead struct {
	p     device.Pointer
	off   int64
	width int64
	value int64
}

func (t *deviceTree) node(a *abi.Array, dt arrow.DataType, depth int) (*DeviceArray, error) {
	n, err := visit(a, dt, depth)
	if err != nil {
		return nil, err
	}
	// sub builds a child or the dictionary of n.
	sub := func(c *abi.Array, ct arrow.DataType, err error) (*DeviceArray, error) {
		if err != nil {
			return nil, err
		}
		return t.node(c, ct, depth+1)
	}
	out := &DeviceArray{
		Type: dt, Length: a.Length, Offset: a.Offset, NullCount: a.NullCount,
		Buffers:    make([]DeviceBuffer, len(n.cbuffers)),
		DeviceType: t.typ, DeviceID: t.id, Device: t.dev, owner: t.owner,
	}
	for i, p := range n.cbuffers {
		out.Buffers[i].Ptr = device.Pointer(p)
	}
	t.nodes = append(t.nodes, deviceNode{n: n, out: out})
	// First pass: note the reads sizes need.
	if _, err := cBufferSizes(&n, func(buf int, idx, w int64) int64 {
		t.reads = append(t.reads, deviceRead{p: device.Pointer(n.cbuffers[buf]), off: idx * w, width: w})
		return 0
	}, nil); err != nil {
		return nil, err
	}
	for i := range int(a.NChildren) {
		k, err := sub(n.child(i))
		if err != nil {
			return nil, err
		}
		out.Children = append(out.Children, k)
	}
	if a.Dictionary != 0 {
		if out.Dictionary, err = sub(n.dictionary()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resolveSizes fetches every noted value (from host-accessible memory
// directly, otherwise all in one batch on one stream with one
// synchronization) and sets each buffer's size.
func (t *deviceTree) resolveSizes() error {
	if t.dev == nil {
		for _, dn := range t.nodes {
			sizes, err := cBufferSizes(&dn.n, func(int, int64, int64) int64 { return 0 }, nil)
			if err != nil {
				return err
			}
			for i := range dn.out.Buffers {
				dn.out.Buffers[i].Size = sizes[i]
			}
		}
		for _, dn := range t.nodes { // contents-dependent sizes are unknown
			if dependsOnContents(dn.n.dt.ID()) {
				for i := 2; i < len(dn.out.Buffers); i++ {
					dn.out.Buffers[i].Size = -1
				}
			}
		}
		return nil
	}
	if err := t.fetch(); err != nil {
		return err
	}
	next := 0
	for _, dn := range t.nodes {
		sizes, err := cBufferSizes(&dn.n, func(int, int64, int64) int64 {
			v := t.reads[next].value
			next++
			return v
		}, nil)
		if err != nil {
			return err
		}
		for i := range dn.out.Buffers {
			dn.out.Buffers[i].Size = sizes[i]
		}
	}
	return nil
}

func dependsOnContents(id arrow.Type) bool {
	switch id {
	case arrow.BINARY, arrow.STRING, arrow.LARGE_BINARY, arrow.LARGE_STRING, arrow.BINARY_VIEW, arrow.STRING_VIEW:
		return true
	}
	return false
}

func (t *deviceTree) fetch() error {
	if len(t.reads) == 0 {
		return nil
	}
	host := make([]byte, 8*len(t.reads))
	if t.dev.HostAccessible() {
		for i := range t.reads {
			r := &t.reads[i]
			copy(host[8*i:8*i+int(r.width)], hostBytesAt(r.p, r.off, r.width))
		}
	} else {
		s, err := t.dev.NewStream()
		if err != nil {
			return err
		}
		defer s.Close()
		var pin runtime.Pinner
		pin.Pin(&host[0])
		defer pin.Unpin()
		for i := range t.reads {
			r := &t.reads[i]
			if err := t.dev.CopyToHost(host[8*i:8*i+int(r.width)], r.p, int(r.off), s); err != nil {
				s.Synchronize()
				return err
			}
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
	}
	for i := range t.reads {
		r := &t.reads[i]
		b := host[8*i:]
		switch r.width {
		case 2:
			r.value = int64(int16(binary.NativeEndian.Uint16(b)))
		case 4:
			r.value = int64(int32(binary.NativeEndian.Uint32(b)))
		default:
			r.value = int64(binary.NativeEndian.Uint64(b))
		}
	}
	return nil
}
