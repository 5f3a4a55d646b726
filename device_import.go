package cdevice

import (
	"errors"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// ImportDeviceArrayOnDevice imports an ArrowDeviceArray of any device type,
// leaving its buffers where they are. It checks the tree's structure and
// finds the size of every buffer, reading from the device only the values
// that sizes depend on: the last offset of each binary and string array,
// the variadic buffer sizes of views. Other values (first offsets, list
// offsets) are checked when the data is brought to the host, or here
// under WithFullValidation. The import is ordered after the producer's
// sync_event:
//   - on CUDA and HIP device memory (device.ValueReader), the reads wait
//     for it on the device and come back in one round trip: one
//     synchronization, one batched copy where the runtime has it;
//   - on OpenCL, likewise: reads queued behind the event, one wait;
//   - on memory the host can read (pinned host memory, managed memory,
//     the CPU), the host waits for the event, then reads in place;
//   - with nothing to read (no variable-length array), the host waits for
//     the event: no round trip when it is done already.
//
// The schema is released at once; arr when the returned array is released.
//
// When no loaded backend owns the array's device, it imports as metadata:
// sizes that depend on device contents are -1, and reading the data fails
// with ErrNotReadable.
//
// WithContext bounds the wait for the producer's sync_event (the host waits
// then, polling the event). The data stays on the device, so
// WithFullValidation's checks of contents apply when it is brought to the
// host (ImportDeviceArray does; else ValidateFull on ToHost's result); here
// it reads every offset the structure checks use.
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
	syncEvent := arr.SyncEvent
	imp, err := startImport(&arr.Array)
	if err != nil {
		return nil, err
	}
	t := deviceTree{dev: dev, typ: arr.DeviceType, id: arr.DeviceID, owner: newDeviceOwner(dev), cfg: cfg, syncEvent: syncEvent}
	t.owner.imp = imp
	root, err := t.node(&imp.c, dt, 0)
	if err == nil {
		err = t.resolveSizes()
	}
	if err != nil {
		if dev != nil && !t.waited {
			// The producer's work may still use what its release frees.
			dev.WaitSyncEvent(cfg.context(), syncEvent, nil)
		}
		t.owner.release() // releases the producer's tree
		return nil, err
	}
	return rootOf(root), nil
}

// deviceTree builds a DeviceArray over an imported tree. Nothing of the
// device's memory is read before the producer's sync_event (fetch).
type deviceTree struct {
	dev       device.Device // nil: no backend
	typ       abi.DeviceType
	id        int64
	owner     *deviceOwner
	cfg       importConfig
	syncEvent uintptr
	nodes     []deviceNode // in build order, for resolveSizes
	reads     []device.ValueRead
	waited    bool // the producer's work is done
}

type deviceNode struct {
	n   node
	out *DeviceArray
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
		if t.needsRead(&n, buf, idx) {
			t.reads = append(t.reads, device.ValueRead{Ptr: device.Pointer(n.cbuffers[buf]), Off: idx * w, Width: int(w)})
		}
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

// needsRead reports whether the value of buffer buf at index idx that
// cBufferSizes asks for is read from the device: what a buffer's size
// depends on (a binary or string array's last offset, which sizes its
// data; a view's variadic buffer sizes), and under full validation every
// value the structure checks use too (first offsets, list offsets). The
// others stand as 0 until the data reaches the host, whose import checks
// them.
func (t *deviceTree) needsRead(n *node, buf int, idx int64) bool {
	switch {
	case t.cfg.full:
		return true
	case dependsOnContents(n.id) && n.id != arrow.BINARY_VIEW && n.id != arrow.STRING_VIEW:
		return buf == 1 && idx == n.end
	}
	return dependsOnContents(n.id)
}

// resolveSizes fetches every noted value and sets each buffer's size.
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
		sizes, err := cBufferSizes(&dn.n, func(buf int, idx, _ int64) int64 {
			if !t.needsRead(&dn.n, buf, idx) {
				return 0
			}
			v := t.reads[next].Value
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

// fetch reads the noted values once the producer's work is done: from
// memory the host can read in place after a host wait, through the
// device's ValueReader in one round trip, or, for a device that is
// neither, with copies on one stream and one synchronization after a host
// wait.
func (t *deviceTree) fetch() error {
	ctx, dev := t.cfg.context(), t.dev
	vr, batched := dev.(device.ValueReader)
	if len(t.reads) > 0 && batched && !dev.HostAccessible() {
		err := vr.ReadValues(ctx, t.syncEvent, t.reads)
		t.waited = err == nil
		return err
	}
	if err := dev.WaitSyncEvent(ctx, t.syncEvent, nil); err != nil || len(t.reads) == 0 {
		t.waited = err == nil
		return err
	}
	t.waited = true
	if dev.HostAccessible() {
		for i := range t.reads {
			r := &t.reads[i]
			r.Set(hostBytesAt(r.Ptr, r.Off, int64(r.Width)))
		}
		return nil
	}
	host := make([]byte, 8*len(t.reads))
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	for i := range t.reads {
		r := &t.reads[i]
		if err := dev.CopyToHost(host[8*i:8*i+r.Width], r.Ptr, int(r.Off), s); err != nil {
			s.Synchronize()
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	for i := range t.reads {
		t.reads[i].Set(host[8*i:])
	}
	return nil
}
