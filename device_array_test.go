package cdevice_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/stream"
)

// testDevices lists the devices the device tests run on: the CPU, and every
// device of every backend that probes successfully on this machine.
func testDevices(t *testing.T) []device.Device {
	devs := []device.Device{device.CPU}
	for _, b := range device.Backends() {
		if info, err := b.Probe(context.Background()); err == nil {
			devs = append(devs, info.Devices...)
		}
	}
	return devs
}

// Every gold batch goes host → device → ArrowDeviceArray → import → host on
// every test device and comes back equal, both ways to the host: imported
// on the device then copied (ImportDeviceRecordBatchOnDevice, ToHost), and
// ImportDeviceRecordBatch (wrapped in place where the host can read the
// memory, with full validation).
func TestDeviceGoldRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, dev := range testDevices(t) {
		t.Run(dev.Name(), func(t *testing.T) {
			for _, c := range goldCases(t) {
				t.Run(c, func(t *testing.T) {
					_, recs := readGold(t, c+".stream")
					for n, rec := range append(recs, recs...) {
						i, direct := n%len(recs), n >= len(recs)
						db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
						if err != nil {
							t.Fatalf("batch %d: copy: %v", i, err)
						}
						arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
						err = db.Export(arr, sch)
						db.Release() // the export holds its own reference
						if err != nil {
							t.Fatalf("batch %d: export: %v", i, err)
						}
						if arr.DeviceType != dev.Type() || arr.DeviceID != dev.ID() {
							t.Errorf("exported as %s:%d, want %s:%d", arr.DeviceType, arr.DeviceID, dev.Type(), dev.ID())
						}
						if dev.Type() == abi.DeviceCPU && arr.SyncEvent != 0 {
							t.Error("a CPU array must have a NULL sync_event")
						}
						var host arrow.RecordBatch
						if direct {
							host, err = cdevice.ImportDeviceRecordBatch(context.Background(), arr, sch, cdevice.WithFullValidation())
							if err != nil {
								t.Fatalf("batch %d: ImportDeviceRecordBatch: %v", i, err)
							}
						} else {
							got, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
							if err != nil {
								t.Fatalf("batch %d: import: %v", i, err)
							}
							host, err = got.ToHost(ctx)
							got.Release()
							if err != nil {
								t.Fatalf("batch %d: to host: %v", i, err)
							}
						}
						if !array.RecordEqual(rec, host) {
							t.Errorf("batch %d differs:\nwant %v\ngot  %v", i, rec, host)
						}
						host.Release()
					}
				})
			}
		})
	}
}

// Single arrays: CopyToDevice → ToHost, CopyTo another device, and
// ImportDeviceArray (arrow.Array result) of an exported DeviceArray.
func TestDeviceArrayCopies(t *testing.T) {
	ctx := context.Background()
	rec := wideBatch(t)
	for _, dev := range testDevices(t) {
		t.Run(dev.Name(), func(t *testing.T) {
			for i, col := range rec.Columns() {
				da, err := cdevice.CopyToDevice(ctx, col, dev)
				if err != nil {
					t.Fatalf("column %d: %v", i, err)
				}
				moved, err := da.CopyTo(ctx, device.CPU)
				if err != nil {
					t.Fatal(err)
				}
				host, err := moved.ToHost(ctx)
				moved.Release()
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(col, host) {
					t.Errorf("column %d via CopyTo: got %v want %v", i, host, col)
				}
				host.Release()

				arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
				if err := da.Export(arr, sch); err != nil {
					t.Fatal(err)
				}
				da.Release()
				got, err := cdevice.ImportDeviceArray(context.Background(), arr, sch)
				if err != nil {
					t.Fatalf("column %d: ImportDeviceArray: %v", i, err)
				}
				if !array.Equal(col, got) {
					t.Errorf("column %d via ImportDeviceArray: got %v want %v", i, got, col)
				}
				got.Release()
			}
		})
	}
}

// An array on a device with no loaded backend imports as metadata; reading
// it fails with ErrUnknownDevice, and release still reaches the producer.
func TestDeviceArrayWithoutBackend(t *testing.T) {
	ctx := context.Background()
	rec := wideBatch(t)
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
	if err := db.Export(arr, sch); err != nil {
		t.Fatal(err)
	}
	db.Release()
	arr.DeviceType, arr.DeviceID = abi.DeviceVulkan, 7 // no backend for it
	got, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
	if err != nil {
		t.Fatalf("metadata import: %v", err)
	}
	if got.Device() != nil || got.Length != rec.NumRows() || len(got.Columns) != int(rec.NumCols()) {
		t.Errorf("metadata: device %v, %d rows, %d columns", got.Device(), got.Length, len(got.Columns))
	}
	if _, err := got.ToHost(ctx); !errors.Is(err, cdevice.ErrUnknownDevice) {
		t.Errorf("ToHost: %v, want ErrUnknownDevice", err)
	}
	got.Release()
	if l := cdevice.LiveLeaks(); l.Exports() != 0 || l.Imports() != 0 || l.DeviceArrays != 0 {
		t.Errorf("after release: %s", l)
	}

	// ImportDeviceArray refuses it and releases the input.
	db, err = cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Export(arr, sch); err != nil {
		t.Fatal(err)
	}
	db.Release()
	arr.DeviceType = abi.DeviceMetal
	if _, err := cdevice.ImportDeviceArray(context.Background(), arr, sch); !errors.Is(err, cdevice.ErrUnknownDevice) {
		t.Errorf("ImportDeviceArray: %v, want ErrUnknownDevice", err)
	}
	if !arr.Array.Released() || !sch.Released() {
		t.Error("a failed import must release its input")
	}
	_ = arrow.Null
}

// eventCounter is a device as itself (same type and id, so imports find the
// registered device) that counts its live streams and events, so tests can
// check that every one of them is closed.
type eventCounter struct {
	device.Device
	streams, events atomic.Int64
}

func (d *eventCounter) NewStream() (device.Stream, error) {
	s, err := d.Device.NewStream()
	if err != nil {
		return nil, err
	}
	d.streams.Add(1)
	return countedStream{s, &d.streams}, nil
}

// The backend's own methods get the backend's own streams.
func (d *eventCounter) CopyToDevice(dst device.Pointer, off int, src []byte, s device.Stream) error {
	return d.Device.CopyToDevice(dst, off, src, unwrapStream(s))
}

func (d *eventCounter) CopyToHost(dst []byte, src device.Pointer, off int, s device.Stream) error {
	return d.Device.CopyToHost(dst, src, off, unwrapStream(s))
}

func (d *eventCounter) CopyOnDevice(dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream) error {
	return d.Device.CopyOnDevice(dst, dstOff, src, srcOff, n, unwrapStream(s))
}

func unwrapStream(s device.Stream) device.Stream {
	if c, ok := s.(countedStream); ok {
		return c.Stream
	}
	return s
}

func (d *eventCounter) NewEvent() (device.Event, error) {
	e, err := d.Device.NewEvent()
	if err != nil {
		return nil, err
	}
	d.events.Add(1)
	return &countedEvent{Event: e, live: &d.events}, nil
}

type countedStream struct {
	device.Stream
	live *atomic.Int64
}

func (s countedStream) Close() error { s.live.Add(-1); return s.Stream.Close() }

type countedEvent struct {
	device.Event
	live *atomic.Int64
}

// Record hands the backend its own stream, as a backend's event expects.
func (e *countedEvent) Record(s device.Stream) error { return e.Event.Record(unwrapStream(s)) }

func (e *countedEvent) Close() error { e.live.Add(-1); return e.Event.Close() }

// emptyShapes are record batches with nothing or next to nothing in them:
// no columns, no rows, both, and columns of empty structs.
func emptyShapes(t *testing.T) map[string]arrow.RecordBatch {
	mem := memory.DefaultAllocator
	empty := arrow.StructOf()
	structs := func(n int, dt *arrow.StructType) arrow.Array {
		b := array.NewStructBuilder(mem, dt)
		defer b.Release()
		for i := range n {
			b.Append(i%3 != 1)
			for f := range dt.NumFields() {
				b.FieldBuilder(f).(*array.StructBuilder).Append(true)
			}
		}
		return b.NewArray()
	}
	batch := func(rows int, cols ...arrow.Array) arrow.RecordBatch {
		fields := make([]arrow.Field, len(cols))
		for i, c := range cols {
			fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: c.DataType(), Nullable: true}
		}
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(rows))
		for _, c := range cols {
			c.Release()
		}
		t.Cleanup(rec.Release)
		return rec
	}
	ints := func(n int) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range n {
			b.Append(int64(i))
		}
		return b.NewArray()
	}
	strs := func(n int) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range n {
			b.Append(fmt.Sprint(i))
		}
		return b.NewArray()
	}
	nested := arrow.StructOf(arrow.Field{Name: "e", Type: empty, Nullable: true})
	return map[string]arrow.RecordBatch{
		"no columns":                  batch(5),
		"no columns no rows":          batch(0),
		"no rows":                     batch(0, ints(0), strs(0)),
		"empty struct":                batch(4, structs(4, empty)),
		"empty struct no rows":        batch(0, structs(0, empty)),
		"nested empty struct":         batch(4, structs(4, nested)),
		"nested empty struct no rows": batch(0, structs(0, nested)),
		"sliced to no rows":           batch(0, array.NewSlice(ints(3), 3, 3), array.NewSlice(strs(3), 1, 1)),
	}
}

// Every way through the device paths of an empty or near-empty batch gives
// back every DeviceArray tree, device allocation, export, import, handle,
// stream and event it took (a batch with no columns once left a tree, and
// its event, behind).
func TestDeviceEmptyShapesBalance(t *testing.T) {
	ctx := context.Background()
	for _, base := range testDevices(t) {
		t.Run(base.Name(), func(t *testing.T) {
			dev := &eventCounter{Device: base}
			for name, rec := range emptyShapes(t) {
				t.Run(name, func(t *testing.T) {
					cs := cStructs{offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t), offHeap[abi.DeviceArrayStream](t)}
					before := cdevice.LiveLeaks()
					check := func(step string) {
						t.Helper()
						if l := cdevice.LiveLeaks(); l != before {
							t.Errorf("%s: leaks %s, before %s", step, l, before)
						}
						if s, e := dev.streams.Load(), dev.events.Load(); s != 0 || e != 0 {
							t.Errorf("%s: %d streams and %d events still open", step, s, e)
						}
					}
					for range 3 {
						emptyShapeRoundTrips(t, ctx, dev, rec, cs, check)
					}
				})
			}
		})
	}
}

// cStructs are C heap structs for exports, allocated once (they count as
// C allocations while the test runs).
type cStructs struct {
	arr *abi.DeviceArray
	sch *abi.Schema
	s   *abi.DeviceArrayStream
}

func emptyShapeRoundTrips(t *testing.T, ctx context.Context, dev device.Device, rec arrow.RecordBatch, cs cStructs, check func(string)) {
	t.Helper()
	arr, sch, s := cs.arr, cs.sch, cs.s
	copyBatch := func() *cdevice.DeviceRecordBatch {
		t.Helper()
		db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
		if err != nil {
			t.Fatal(err)
		}
		if db.Length != rec.NumRows() || len(db.Columns) != int(rec.NumCols()) {
			t.Errorf("copy has %d rows and %d columns, want %d and %d", db.Length, len(db.Columns), rec.NumRows(), rec.NumCols())
		}
		return db
	}
	wantBatch := func(step string, got arrow.RecordBatch) {
		t.Helper()
		if !array.RecordEqual(rec, got) {
			t.Errorf("%s: got %v, want %v", step, got, rec)
		}
		got.Release()
	}

	copyBatch().Release()
	check("CopyRecordBatchToDevice")

	db := copyBatch()
	host, err := db.ToHost(ctx)
	db.Release()
	if err != nil {
		t.Fatal(err)
	}
	wantBatch("ToHost", host)
	check("DeviceRecordBatch.ToHost")

	db = copyBatch()
	if err := db.Export(arr, sch); err != nil {
		t.Fatal(err)
	}
	db.Release()
	got, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
	if err != nil {
		t.Fatal(err)
	}
	host, err = got.ToHost(ctx)
	got.Release()
	if err != nil {
		t.Fatal(err)
	}
	wantBatch("export, import", host)
	check("DeviceRecordBatch.Export, ImportDeviceRecordBatchOnDevice")

	// The whole batch as one struct array, and each column.
	whole := array.RecordToStructArray(rec)
	defer whole.Release()
	cols := append([]arrow.Array{whole}, rec.Columns()...)
	for i, col := range cols {
		da, err := cdevice.CopyToDevice(ctx, col, dev)
		if err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
		moved, err := da.CopyTo(ctx, dev)
		if err != nil {
			t.Fatal(err)
		}
		h, err := moved.ToHost(ctx)
		moved.Release()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(col, h) {
			t.Errorf("column %d via CopyTo, ToHost: got %v want %v", i, h, col)
		}
		h.Release()
		if err := da.Export(arr, sch); err != nil {
			t.Fatal(err)
		}
		da.Release()
		a, err := cdevice.ImportDeviceArray(context.Background(), arr, sch)
		if err != nil {
			t.Fatalf("column %d: ImportDeviceArray: %v", i, err)
		}
		if !array.Equal(col, a) {
			t.Errorf("column %d via ImportDeviceArray: got %v want %v", i, a, col)
		}
		a.Release()
		check(fmt.Sprintf("column %d: CopyToDevice, CopyTo, ToHost, Export, ImportDeviceArray", i))
	}

	// A stream of such batches, exported and imported back.
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec, rec, rec})
	if err != nil {
		t.Fatal(err)
	}
	err = stream.ExportReaderToDevice(ctx, rdr, dev, s)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for db, err := range r.All(ctx) {
		if err != nil {
			t.Fatalf("stream batch %d: %v", n, err)
		}
		host, err := db.ToHost(ctx)
		db.Release()
		if err != nil {
			t.Fatal(err)
		}
		wantBatch("stream", host)
		n++
	}
	r.Release()
	if n != 3 {
		t.Errorf("stream gave %d batches, want 3", n)
	}
	check("stream.ExportReaderToDevice, ImportDeviceStream")
}

// Release on a child gives back only what the child's own Retain took: it
// never drops the root's reference, and a retained child keeps the whole
// tree after the root is released.
func TestDeviceArrayChildReleaseKeepsRoot(t *testing.T) {
	before := cdevice.LiveLeaks()
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32)
	vb := b.ValueBuilder().(*array.Int32Builder)
	b.Append(true)
	vb.AppendValues([]int32{1, 2, 3}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	root, err := cdevice.CopyToDevice(context.Background(), arr, device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	child := root.Children[0]
	child.Release() // took nothing: must not free the tree
	child.Release()
	if l := cdevice.LiveLeaks(); l.DeviceArrays != before.DeviceArrays+1 {
		t.Fatalf("a child's Release freed the tree: %s", l)
	}
	child.Retain()
	root.Release() // the child's reference keeps the tree
	if l := cdevice.LiveLeaks(); l.DeviceArrays != before.DeviceArrays+1 {
		t.Fatalf("the tree went with the root's reference while a child held one: %s", l)
	}
	child.Release()
	if l := cdevice.LiveLeaks(); l.DeviceArrays != before.DeviceArrays || l.DeviceAllocs != before.DeviceAllocs {
		t.Fatalf("after the child's last Release: %s, before: %s", l, before)
	}
	child.Release() // nothing left to give back
}

// CPURecordBatch shares rb's memory (no copy), keeps it alive and pinned
// after rb's own release, and its export imports back equal, for every gold
// batch; the leak check in TestMain sees everything given back.
func TestCPURecordBatch(t *testing.T) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			_, recs := readGold(t, c+".stream")
			for i, rec := range recs {
				rec.Retain()
				db, err := cdevice.CPURecordBatch(rec)
				if err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
				for j, col := range db.Columns {
					for k, b := range col.Buffers {
						id := col.Type.ID()
						if b.Ptr == 0 || (id == arrow.BINARY_VIEW || id == arrow.STRING_VIEW) && k == len(col.Buffers)-1 {
							continue // a view's variadic sizes are made for C, not shared
						}
						if !sharesHostBuffer(rec.Column(j).Data(), uintptr(b.Ptr)) {
							t.Errorf("batch %d column %d buffer %d at %#x is not one of the source's", i, j, k, b.Ptr)
						}
					}
				}
				rec.Release() // the device batch keeps what it shares
				arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
				err = db.Export(arr, sch)
				db.Release()
				if err != nil {
					t.Fatalf("batch %d: export: %v", i, err)
				}
				if arr.DeviceType != abi.DeviceCPU || arr.SyncEvent != 0 {
					t.Errorf("exported as %s with sync_event %#x", arr.DeviceType, arr.SyncEvent)
				}
				host, err := cdevice.ImportDeviceRecordBatch(context.Background(), arr, sch, cdevice.WithFullValidation())
				if err != nil {
					t.Fatalf("batch %d: import: %v", i, err)
				}
				if !array.RecordEqual(rec, host) {
					t.Errorf("batch %d differs:\nwant %v\ngot  %v", i, rec, host)
				}
				host.Release()
			}
		})
	}
	if _, err := cdevice.CPURecordBatch(nil); !errors.Is(err, cdevice.ErrInvalid) {
		t.Errorf("CPURecordBatch(nil): %v, want ErrInvalid", err)
	}
}

// sharesHostBuffer reports whether p is the start of one of d's buffers
// (or its children's or dictionary's).
func sharesHostBuffer(d arrow.ArrayData, p uintptr) bool {
	for _, b := range d.Buffers() {
		if b != nil && b.Len() > 0 && uintptr(unsafe.Pointer(&b.Bytes()[0])) == p {
			return true
		}
	}
	for _, c := range d.Children() {
		if sharesHostBuffer(c, p) {
			return true
		}
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		return sharesHostBuffer(dict, p)
	}
	return false
}
