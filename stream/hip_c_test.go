package stream_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// hipPeer returns HIP's first device and testdata/c/hip_peer.c loaded on
// the runtime the backend loaded (chipStar on PoCL in CI's HIP leg).
func hipPeer(t *testing.T) (device.Device, func(string) func(...uintptr) uintptr) {
	t.Helper()
	dev := testsupport.BackendDevice(t, "hip")
	info, err := hip.Backend.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lib := ctest.Library(t, "hip_peer")
	ctest.InitRuntime(t, lib, "hip_peer_init", info.Library)
	return dev, func(name string) func(...uintptr) uintptr { return ctest.Func(t, lib, name) }
}

// A C producer's ROCm stream on a real HIP runtime: each batch's values
// are copied by the producer's stream behind a large copy, its event
// recorded after them, so the import must wait on each sync_event; C gets
// back every struct it made.
func TestCProducerDeviceStreamHIP(t *testing.T) {
	dev, f := hipPeer(t)
	const batches, rows = 4, 1000
	s := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if rc := int32(f("hip_make_device_stream")(cstPtr(s), uintptr(dev.ID()), batches, rows)); rc != 0 {
		t.Fatalf("hip_make_device_stream = %d", rc)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.DeviceType() != abi.DeviceROCm {
		t.Errorf("DeviceType %s, want rocm", r.DeviceType())
	}
	n := 0
	for rec, err := range r.HostRecords(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range rec.Column(0).(*array.Int32).Int32Values() {
			if v != int32(n*rows+i) {
				t.Fatalf("batch %d value %d = %d, want %d", n, i, v, n*rows+i)
			}
		}
		n++
	}
	if n != batches {
		t.Errorf("%d batches, want %d", n, batches)
	}
	r.Release()
	if live := int64(int(f("peer_stream_live_count")())); live != 0 {
		t.Errorf("%d HIP stream structs live after Release", live)
	}
}

// Our ROCm stream drained by C: its stream waits for each batch's
// sync_event (an event of ours from the real runtime) before it copies the
// values back.
func TestCConsumerDeviceStreamHIP(t *testing.T) {
	dev, f := hipPeer(t)
	const batches, rows = 5, 4096
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil)
	recs := make([]arrow.RecordBatch, batches)
	for b := range recs {
		bld := array.NewInt32Builder(memory.DefaultAllocator)
		for i := range rows {
			bld.Append(int32(b*rows + i))
		}
		col := bld.NewArray()
		bld.Release()
		recs[b] = array.NewRecordBatch(sc, []arrow.Array{col}, rows)
		col.Release()
		defer recs[b].Release()
	}
	rdr, err := array.NewRecordReader(sc, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	s := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if err := stream.ExportReaderToDevice(context.Background(), rdr, dev, s); err != nil {
		t.Fatal(err)
	}
	if n := int64(int(f("hip_drain_device_stream")(cstPtr(s), rows))); n != batches {
		t.Fatalf("hip_drain_device_stream = %d, want %d batches (a negative value is the step that failed)", n, batches)
	}
}
