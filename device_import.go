package cdevice

import (
	"context"
	"errors"
	"runtime"
	"slices"

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
// ctx bounds the wait for the producer's sync_event (the host waits then,
// polling the event): when it ends first, the import fails with its error
// (errors.Is with context.Canceled or context.DeadlineExceeded) and
// releases its input, so an event that never completes cannot hang it. The data stays on the device, so
// WithFullValidation's checks of contents apply when it is brought to the
// host (ImportDeviceArray does; else ValidateFull on ToHost's result); here
// it reads every offset the structure checks use.
func ImportDeviceArrayOnDevice(ctx context.Context, arr *abi.DeviceArray, schema *abi.Schema, opts ...ImportOption) (*DeviceArray, error) {
	f, err := ImportField(schema)
	if err != nil {
		ReleaseDeviceArray(arr)
		return nil, err
	}
	cfg := applyImportOptions(opts)
	cfg.ctx = ctx
	return importDeviceTree(arr, f.Type, cfg)
}

// ImportDeviceRecordBatchOnDevice imports a struct-typed ArrowDeviceArray
// and its schema as a DeviceRecordBatch, leaving the buffers where they are,
// as ImportDeviceArrayOnDevice does (ImportDeviceRecordBatch brings the
// batch to host memory).
func ImportDeviceRecordBatchOnDevice(ctx context.Context, arr *abi.DeviceArray, schema *abi.Schema, opts ...ImportOption) (*DeviceRecordBatch, error) {
	sc, err := ImportSchema(schema)
	if err != nil {
		ReleaseDeviceArray(arr)
		return nil, err
	}
	return ImportDeviceRecordBatchOnDeviceWithSchema(ctx, arr, sc, opts...)
}

// ImportDeviceRecordBatchOnDeviceWithSchema is
// ImportDeviceRecordBatchOnDevice with a schema already imported (a
// stream's).
func ImportDeviceRecordBatchOnDeviceWithSchema(ctx context.Context, arr *abi.DeviceArray, sc *arrow.Schema, opts ...ImportOption) (*DeviceRecordBatch, error) {
	bs, errs := ImportDeviceRecordBatchesOnDevice(ctx, []*abi.DeviceArray{arr}, sc, opts...)
	return bs[0], errs[0]
}

// ImportDeviceRecordBatchesOnDevice imports several struct-typed
// ArrowDeviceArrays of schema sc as ImportDeviceRecordBatchOnDevice does,
// with the values their sizes need read together: on a device.ValueReader
// (CUDA and HIP device memory, OpenCL) the batches of one device cost one
// round trip between them, behind all their producers' sync_events. The
// i-th batch or its error is at index i of the results; a batch's error
// is its own (when reading together fails, each batch is read again on
// its own, so that one batch's bad buffer fails only that batch). Every
// array is released, or owned by its batch, on return.
func ImportDeviceRecordBatchesOnDevice(ctx context.Context, arrs []*abi.DeviceArray, sc *arrow.Schema, opts ...ImportOption) ([]*DeviceRecordBatch, []error) {
	bs, errs := make([]*DeviceRecordBatch, len(arrs)), make([]error, len(arrs))
	if sc == nil {
		for i, arr := range arrs {
			ReleaseDeviceArray(arr)
			errs[i] = invalidf("nil schema")
		}
		return bs, errs
	}
	var rest []*abi.DeviceArray // those imported as trees
	var at []int                // their indexes
	for i, arr := range arrs {
		if arr != nil && arr.Array.Release != 0 {
			// Our own untouched export: hand back the batch itself.
			if b, ok := exportedSource(&arr.Array).(*DeviceRecordBatch); ok && b.Schema == sc &&
				arr.DeviceType == b.root.DeviceType && arr.DeviceID == b.root.DeviceID {
				b.Retain()
				ReleaseArray(&arr.Array)
				bs[i] = b
				continue
			}
		}
		rest, at = append(rest, arr), append(at, i)
	}
	roots, rerrs := make([]*DeviceArray, len(rest)), make([]error, len(rest))
	cfg := applyImportOptions(opts)
	cfg.ctx = ctx
	importDeviceTrees(rest, structOf(sc), cfg, roots, rerrs)
	for k, i := range at {
		root, err := roots[k], rerrs[k]
		if err == nil && root.NullCount > 0 {
			root.Release()
			err = invalidf("a record batch's struct array has %d nulls", root.NullCount)
		}
		if err != nil {
			errs[i] = err
			continue
		}
		bs[i] = newDeviceRecordBatch(sc, root)
	}
	return bs, errs
}

func importDeviceTree(arr *abi.DeviceArray, dt arrow.DataType, cfg importConfig) (*DeviceArray, error) {
	var out [1]*DeviceArray
	var errs [1]error
	importDeviceTrees([]*abi.DeviceArray{arr}, dt, cfg, out[:], errs[:])
	return out[0], errs[0]
}

// importDeviceTrees imports each of arrs, typed dt, into out (or its
// error into errs): every tree is walked first, then the values their
// sizes need are fetched (together where one ValueReader reads them),
// then each tree's sizes are set.
func importDeviceTrees(arrs []*abi.DeviceArray, dt arrow.DataType, cfg importConfig, out []*DeviceArray, errs []error) {
	trees := make([]*deviceTree, len(arrs))
	for i, arr := range arrs {
		trees[i], errs[i] = walkDeviceTree(arr, dt, cfg)
	}
	fetchTrees(trees, errs)
	for i, t := range trees {
		if t == nil {
			continue
		}
		if errs[i] == nil {
			errs[i] = t.setSizes()
		}
		if errs[i] != nil {
			t.fail()
			continue
		}
		out[i] = rootOf(t.root)
	}
}

// walkDeviceTree takes arr's tree over and builds a DeviceArray over it,
// noting the values its sizes need; nothing of the device's memory is
// read yet. On an error the tree is released.
func walkDeviceTree(arr *abi.DeviceArray, dt arrow.DataType, cfg importConfig) (*deviceTree, error) {
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
	t := &deviceTree{dev: dev, typ: arr.DeviceType, id: arr.DeviceID, owner: newDeviceOwner(dev), cfg: cfg, syncEvent: syncEvent}
	t.owner.imp = imp
	if t.root, err = t.node(&imp.c, dt, 0); err != nil {
		t.fail()
		return nil, err
	}
	return t, nil
}

// fail releases the producer's tree, once the producer's work that may
// still use what its release frees is done.
func (t *deviceTree) fail() {
	if t.dev != nil && !t.waited {
		t.dev.WaitSyncEvent(t.cfg.context(), t.syncEvent, nil)
	}
	t.owner.release()
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
	root      *DeviceArray
	nodes     []deviceNode // in build order, for setSizes
	reads     []device.ValueRead
	fetched   bool // fetch ran
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

// setSizes sets each buffer's size from the fetched values; with no
// backend for the device, sizes that depend on its contents are -1.
func (t *deviceTree) setSizes() error {
	next := 0
	for _, dn := range t.nodes {
		sizes, err := cBufferSizes(&dn.n, func(buf int, idx, _ int64) int64 {
			if t.dev == nil || !t.needsRead(&dn.n, buf, idx) {
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
			if t.dev == nil && i >= 2 && dependsOnContents(dn.n.dt.ID()) {
				dn.out.Buffers[i].Size = -1
			}
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

// fetchTrees fetches the noted values of every tree (errs[i] for
// trees[i]; nil trees failed before). Trees on one device.ValueReader read
// together, in one round trip; if that fails, each reads again on its own,
// so that every error is its own tree's.
func fetchTrees(trees []*deviceTree, errs []error) {
	var group []*deviceTree
	var at []int
	for i, t := range trees {
		if t == nil || t.fetched {
			continue
		}
		group, at = append(group[:0], t), append(at[:0], i)
		if t.readsTogether() {
			for j := i + 1; j < len(trees); j++ {
				if u := trees[j]; u != nil && !u.fetched && u.readsTogether() && u.typ == t.typ && u.id == t.id {
					group, at = append(group, u), append(at, j)
				}
			}
		}
		if len(group) > 1 && readTogether(group) == nil {
			continue
		}
		for k, u := range group {
			errs[at[k]] = u.fetch()
		}
	}
}

// readsTogether reports whether t's values are read by its device's
// ValueReader, which can read other trees' with them.
func (t *deviceTree) readsTogether() bool {
	_, ok := t.dev.(device.ValueReader)
	return ok && len(t.reads) > 0 && !t.dev.HostAccessible()
}

// readTogether reads the values of trees on one ValueReader device in one
// ReadValues, behind all their sync events.
func readTogether(trees []*deviceTree) error {
	var events []uintptr
	var reads []device.ValueRead
	for _, t := range trees {
		if !slices.Contains(events, t.syncEvent) { // batches of one producer's copy share theirs
			events = append(events, t.syncEvent)
		}
		reads = append(reads, t.reads...)
	}
	t0 := trees[0]
	if err := t0.dev.(device.ValueReader).ReadValues(t0.cfg.context(), events, reads); err != nil {
		return err
	}
	for _, t := range trees {
		reads = reads[copy(t.reads, reads):]
		t.fetched, t.waited = true, true
	}
	return nil
}

// fetch reads the noted values once the producer's work is done: from
// memory the host can read in place after a host wait, through the
// device's ValueReader in one round trip, or, for a device that is
// neither, with copies on one stream and one synchronization after a host
// wait. With no backend for the device, nothing is read.
func (t *deviceTree) fetch() error {
	t.fetched = true
	ctx, dev := t.cfg.context(), t.dev
	if dev == nil {
		return nil
	}
	if t.readsTogether() {
		err := dev.(device.ValueReader).ReadValues(ctx, []uintptr{t.syncEvent}, t.reads)
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
