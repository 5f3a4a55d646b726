package cuda_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// Tests named Real use the libraries a GPU machine has (a real libcudart
// and libcuda, or whatever $CDEVICE_CUDA_LIBRARY and
// $CDEVICE_CUDA_DRIVER_LIBRARY name), each API on its own, and skip when
// there is no library or no device: go test ./device/cuda -run Real -v on
// a GPU machine. A bad stream or event handle is undefined behaviour on a
// real GPU (the runtime dereferences it): tests of bad handles run only on
// the doubles.

func TestReal(t *testing.T) { eachAPI(t, gpurttest.RunReal) }

func TestRealCUDA(t *testing.T) {
	names := map[string]string{"runtime": "cudaErrorMemoryAllocation", "driver": "CUDA_ERROR_OUT_OF_MEMORY"}
	eachAPI(t, func(t *testing.T, rt gpurttest.Runtime) {
		for _, d := range gpurttest.RealDevices(t, rt) {
			maj, min := d.(*cuda.Device).ComputeCapability()
			t.Logf("%v: sm_%d%d", d, maj, min)
			if maj < 3 {
				t.Errorf("%v: compute capability %d.%d", d, maj, min)
			}
			if name := d.ErrorName(2); name != names[rt.Table.API.String()] {
				t.Errorf("ErrorName(2) = %q", name)
			}
		}
	})
}

// An array exported through one API is imported through the other, on the
// GPU: the sync_event one made is waited for by the other.
func TestRealMixedAPIs(t *testing.T) {
	rtDevs := gpurttest.RealDevices(t, cuda.Runtime)
	drvDevs := gpurttest.RealDevices(t, cuda.Driver)
	t.Run("RuntimeToDriver", func(t *testing.T) { exportImport(t, rtDevs[0], drvDevs[0], nil) })
	t.Run("DriverToRuntime", func(t *testing.T) { exportImport(t, drvDevs[0], rtDevs[0], nil) })
}

// The copy table: 64 MiB and 1 GiB copies between host memory (pageable
// Go memory, or pinned by the runtime) and the GPU, each waited for,
// through each API, beside the same copies by C code through the same
// library (testdata/c/copy_baseline.c), named as in
// BenchmarkRealToHost/<runtime|driver>/<pageable|pinned>/<size>/<Go|C>:
// go test ./device/cuda -run XXX -bench Real.
func BenchmarkRealCopyToDevice(b *testing.B) { benchmarkCopies(b, true) }
func BenchmarkRealToHost(b *testing.B)       { benchmarkCopies(b, false) }

func benchmarkCopies(b *testing.B, toDevice bool) {
	for _, rt := range cuda.APIs {
		b.Run(rt.Table.API.String(), func(b *testing.B) { gpurttest.BenchmarkCopies(b, rt, toDevice) })
	}
}

// The Real tests and benchmarks run here on the double with both APIs,
// standing in for a GPU machine's libcudart and libcuda (one state, as
// the real two share the GPU), so that their code is proven before a GPU
// runs it; short (-test.short), as a GPU's sizes are slow on the double.
func TestDoubleStandsInForGPU(t *testing.T) {
	fake := ctest.Path(t, "fakecuda_mixed")
	args := []string{"-test.run=^TestReal", "-test.bench=^BenchmarkReal", "-test.benchtime=1x", "-test.v", "-test.count=1", "-test.short"}
	nanoarrow := true
	if os.Getenv(ctest.EnvPrebuilt) != "" {
		// nanoarrow's peer is compiled as the test runs; this binary has
		// prebuilt C peers only (Windows under Wine).
		t.Logf("without TestRealNanoarrow: %s is set, no C compiler here", ctest.EnvPrebuilt)
		args, nanoarrow = append(args, "-test.skip=^TestRealNanoarrow$"), false
	}
	cmd := selfexec.Command([]string{cuda.EnvLibrary + "=" + fake, cuda.EnvDriverLibrary + "=" + fake, cuda.EnvAPI + "="}, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wants := []string{"--- PASS: TestReal/runtime/Copies", "--- PASS: TestReal/driver/Copies",
		"--- PASS: TestRealMixedAPIs/RuntimeToDriver", "--- PASS: TestRealMixedAPIs/DriverToRuntime"}
	if nanoarrow {
		wants = append(wants, "--- PASS: TestRealNanoarrow/runtime/cuda:0/ArrayToNanoarrow", "--- PASS: TestRealNanoarrow/driver/cuda_host:0/StreamFromNanoarrow")
	}
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("the Real run lacks %q:\n%s", want, out)
		}
	}
	// The whole copy table (its -short sizes), each with a rate.
	for _, dir := range []string{"BenchmarkRealCopyToDevice", "BenchmarkRealToHost"} {
		for _, api := range []string{"runtime", "driver"} {
			for _, mem := range []string{"pageable", "pinned"} {
				for _, size := range []string{"1MiB", "4MiB"} {
					for _, side := range []string{"Go", "C"} {
						name := strings.Join([]string{dir, api, mem, size, side}, "/")
						if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(-\d+)?\s.*MB/s`).MatchString(string(out)) {
							t.Errorf("the Real run lacks %s's MB/s:\n%s", name, out)
						}
					}
				}
			}
		}
	}
	// The device stream's table through each API, each with its rate.
	for _, api := range []string{"runtime", "driver"} {
		for _, side := range []string{"Stream", "Go", "C"} {
			name := "BenchmarkRealDeviceStream/" + api + "/" + side
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(-\d+)?\s.*batches/s`).MatchString(string(out)) {
				t.Errorf("the Real run lacks %s's batches/s:\n%s", name, out)
			}
		}
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Errorf("a Real test skipped on the double:\n%s", out)
	}
}

// BenchmarkRealDeviceStream is the cdevice bench command's device stream
// row on the first CUDA device, through each API (gpurttest.DeviceStreamTable:
// Stream, Go, C).
func BenchmarkRealDeviceStream(b *testing.B) {
	for _, rt := range cuda.APIs {
		b.Run(rt.Table.API.String(), func(b *testing.B) { gpurttest.DeviceStreamTable(b, rt) })
	}
}
