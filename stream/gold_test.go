package stream_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	_ "github.com/purearrow/cdevice/device/opencl" // PoCL in CI
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// The shared gold-file and comparison helpers (internal/testsupport).
var (
	goldCases       = testsupport.GoldCases
	goldAllocator   = testsupport.CheckedAllocator
	openGold        = testsupport.OpenGoldStream
	schemaDiffs     = testsupport.SchemaDiffs
	checkBatch      = testsupport.CheckBatch
	forEachIdentity = testsupport.ForEachIdentity
)

// readGold reads every batch of a gold case's .stream file.
func readGold(tb testing.TB, c string) (*arrow.Schema, []arrow.RecordBatch) {
	return testsupport.ReadGold(tb, c+".stream")
}

func offHeap[T cdevice.Struct](tb testing.TB) *T { return testsupport.OffHeap[T](tb) }

// Every gold case, read batch by batch from its .stream file by an
// ipc.Reader that is exported as an ArrowArrayStream and imported back:
// equal schema, equal batches, the same count.
func TestGoldStream(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		for _, c := range goldCases(t) {
			t.Run(c, func(t *testing.T) {
				schema, want := readGold(t, c)
				src := openGold(t, c, goldAllocator(t))
				s := offHeap[abi.ArrayStream](t)
				err := stream.ExportReader(src, s)
				src.Release() // the export holds its own reference
				if err != nil {
					t.Fatalf("export: %v", err)
				}
				r, err := stream.ImportReader(s)
				if err != nil {
					t.Fatalf("import: %v", err)
				}
				drainGold(t, r, schema, want)
				if !s.Released() {
					t.Error("releasing the Reader did not release the C stream")
				}
			})
		}
	})
}

// drainGold reads r to the end, compares it with the expected schema and
// batches, and releases it.
func drainGold(t *testing.T, r *stream.Reader, schema *arrow.Schema, want []arrow.RecordBatch) {
	t.Helper()
	defer r.Release()
	for _, d := range schemaDiffs(schema, r.Schema()) {
		t.Errorf("stream schema: %s", d)
	}
	n := 0
	for r.Next() {
		if n < len(want) {
			checkBatch(t, n, want[n], r.RecordBatch())
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatalf("after %d batches: %v", n, err)
	}
	if n != len(want) {
		t.Errorf("got %d batches, want %d", n, len(want))
	}
	if r.Next() {
		t.Error("Next after the end returned true")
	}
}

// Every gold case through an ArrowDeviceArrayStream on device.CPU.
func TestGoldDeviceStreamCPU(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) { goldDeviceStream(t, device.CPU) })
}

// Every gold case through an ArrowDeviceArrayStream on the first OpenCL
// device (PoCL in CI).
func TestGoldDeviceStreamOpenCL(t *testing.T) {
	goldDeviceStream(t, testsupport.BackendDevice(t, "opencl"))
}

// The same on HIP's device memory (chipStar on PoCL in CI).
func TestGoldDeviceStreamHIP(t *testing.T) {
	goldDeviceStream(t, testsupport.BackendDevice(t, "hip"))
}

func goldDeviceStream(t *testing.T, dev device.Device) {
	ctx := context.Background()
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, want := readGold(t, c)
			src := openGold(t, c, goldAllocator(t))
			s := offHeap[abi.DeviceArrayStream](t)
			err := stream.ExportReaderToDevice(ctx, src, dev, s)
			src.Release()
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			if s.DeviceType != dev.Type() {
				t.Errorf("exported stream's device_type = %s, want %s", s.DeviceType, dev.Type())
			}
			r, err := stream.ImportDeviceStream(s)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			defer r.Release()
			if r.DeviceType() != dev.Type() {
				t.Errorf("DeviceType() = %s, want %s", r.DeviceType(), dev.Type())
			}
			for _, d := range schemaDiffs(schema, r.Schema()) {
				t.Errorf("stream schema: %s", d)
			}
			n := 0
			for rec, err := range r.HostRecords(ctx) {
				if err != nil {
					t.Fatalf("after %d batches: %v", n, err)
				}
				if n < len(want) {
					checkBatch(t, n, want[n], rec)
				}
				n++
			}
			if n != len(want) {
				t.Errorf("got %d batches, want %d", n, len(want))
			}
		})
	}
}
