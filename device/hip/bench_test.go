package hip_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// The benchmarks named Real run on the HIP runtime this machine has (a
// real AMD GPU's, chipStar's on an OpenCL device, or whatever
// $CDEVICE_HIP_LIBRARY names) and skip without one. Each puts Go beside C
// code that makes the same calls through the same library
// (testdata/c/copy_baseline.c), so that what is ours and what is the
// runtime's can be told apart:
//
//	go test ./device/hip -run XXX -bench BenchmarkReal -benchtime 5x -count 5

// The copy table: 64 MiB and 1 GiB copies (1 MiB and 4 MiB under -short)
// between host memory (pageable Go memory, or pinned by the runtime) and
// the GPU, each waited for, named as in
// BenchmarkRealToHost/<pageable|pinned>/<size>/<Go|C> ($CDEVICE_BENCH_SIZES
// sets other sizes: 16MiB,64MiB on a CPU).
func BenchmarkRealCopyToDevice(b *testing.B) { gpurttest.BenchmarkCopies(b, hip.Runtime, true) }
func BenchmarkRealToHost(b *testing.B)       { gpurttest.BenchmarkCopies(b, hip.Runtime, false) }

// BenchmarkRealDeviceStream is the cdevice bench command's device stream
// row on the first HIP device (gpurttest.DeviceStreamTable: Stream, Go, C).
func BenchmarkRealDeviceStream(b *testing.B) { gpurttest.DeviceStreamTable(b, hip.Runtime) }

// The Real benchmarks run here on the HIP double, standing in for a HIP
// machine's library, so that their code (the C side's HIP names above
// all) is proven before a GPU runs it; short, with one iteration each.
func TestRealBenchmarksOnDouble(t *testing.T) {
	fake := ctest.Path(t, "fakehip")
	cmd := selfexec.Command([]string{hip.EnvLibrary + "=" + fake},
		"-test.run=^$", "-test.bench=^BenchmarkReal", "-test.benchtime=1x", "-test.count=1", "-test.short")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rows []string
	for _, dir := range []string{"BenchmarkRealCopyToDevice", "BenchmarkRealToHost"} {
		for _, mem := range []string{"pageable", "pinned"} {
			for _, size := range []string{"1MiB", "4MiB"} {
				for _, side := range []string{"Go", "C"} {
					rows = append(rows, strings.Join([]string{dir, mem, size, side}, "/")+`(-\d+)?\s.*MB/s`)
				}
			}
		}
	}
	for _, side := range []string{"Stream", "Go", "C"} {
		rows = append(rows, "BenchmarkRealDeviceStream/"+side+`(-\d+)?\s.*batches/s`)
	}
	for _, row := range rows {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(string(out)) {
			t.Errorf("the benchmarks' output lacks %s:\n%s", row, out)
		}
	}
	if strings.Contains(string(out), "--- SKIP") || strings.Contains(string(out), "--- FAIL") {
		t.Errorf("a Real benchmark skipped or failed on the double:\n%s", out)
	}
}
