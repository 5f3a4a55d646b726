package cuda_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	cdevice "github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/importtest"
	"github.com/purearrow/cdevice/stream"
)

// The latency of an NVIDIA H200 on PCIe 5 (testdata/gpu/2026-11-27-h200):
// a round trip to the device and back, and a runtime call, in nanoseconds.
const h200RoundTrip, h200Call = 7500, 200

// BenchmarkDeviceStreamModel is the C path of the cdevice bench command's
// device stream (a C producer's batch imported, left on the device) on the
// CUDA double with a GPU's latency (fake_cuda_set_latency: 7.5 µs a round
// trip, 0.2 µs a call), through each API, beside nanoarrow's own import of
// the same batches on the same double (ArrowDeviceArrayViewSetArray, its
// CUDA backend built from ../shared/nanoarrow), and through the async
// interface: what only a GPU would show otherwise, on any machine. The
// bench's wide batch, and a nested one.
// Run it alone, so that the double is the process's CUDA library:
//
//	go test ./device/cuda -run XXX -bench DeviceStreamModel
func BenchmarkDeviceStreamModel(b *testing.B) {
	fake := ctest.Path(b, "fakecuda_mixed")
	os.Setenv(cuda.EnvLibrary, fake)
	os.Setenv(cuda.EnvDriverLibrary, fake)
	for _, rt := range cuda.APIs {
		if info, err := rt.Real.Probe(context.Background()); err != nil || info.Library != fake {
			b.Skipf("the %s API's backend loaded %q (%v), not the double: run this benchmark alone", rt.Table.API, info.Library, err)
		}
	}
	if err := gpurttest.SetLatency(fake, h200RoundTrip, h200Call); err != nil {
		b.Fatal(err)
	}
	defer gpurttest.SetLatency(fake, 0, 0)
	peer := openNanoarrow(b)
	for _, batch := range sample.DeviceShapes {
		rec := batch.Make()
		for _, rt := range cuda.APIs {
			d := gpurttest.RealDevices(b, rt)[0] // cuda:0, device memory
			b.Run(batch.Name+"/"+rt.Table.API.String(), func(b *testing.B) {
				registerFor(b, d)
				gpurttest.BenchmarkDeviceStream(b, d, rec, fake)
			})
			b.Run(batch.Name+"/"+rt.Table.API.String()+"/async", func(b *testing.B) {
				registerFor(b, d)
				gpurttest.BenchmarkAsyncDeviceStream(b, d, rec, fake)
			})
		}
		if batch.Name == "wide" { // nanoarrow cannot take views (see nanoarrowCopies)
			d := gpurttest.RealDevices(b, cuda.Driver)[0]
			b.Run(batch.Name+"/nanoarrow", func(b *testing.B) { benchmarkNanoarrowImport(b, peer, d, rec) })
		}
		rec.Release()
	}
}

// benchmarkNanoarrowImport sends rec, copied to d once, b.N times through
// our ArrowDeviceArrayStream to nanoarrow, which imports each batch
// (na_peer_bench_import), in batches/s.
func benchmarkNanoarrowImport(b *testing.B, peer *nanoarrow, d gpurttest.Device, rec arrow.RecordBatch) {
	ctx := context.Background()
	registerFor(b, d)
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, d)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Release()
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	n := b.N
	if err := stream.ExportDeviceStream(rec.Schema(), d.Type(), importtest.Repeat(db, n), s); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	rc := peer.call("na_peer_bench_import", ptr(s), uintptr(n))
	b.StopTimer()
	if err := peer.check("na_peer_bench_import", rc); err != nil {
		b.Fatal(fmt.Errorf("%w", err))
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "batches/s")
}
