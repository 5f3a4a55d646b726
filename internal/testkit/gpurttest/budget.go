package gpurttest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// A Double is one runtime double whose costs a budget test holds, in a
// process of its own (a backend probes once a process). The test binary
// must register the cuda and hip backends.
type Double struct {
	Name    string
	backend string // its registered name
	typ     abi.DeviceType
	library string                          // in testdata/c
	env     func(t *testing.T) []string     // the child's environment
	setup   func(t *testing.T, path string) // in the child, before the probe
}

// Doubles are the runtimes a budget is held on: the CUDA runtime and
// driver API doubles, the HIP double and chipStar's.
var Doubles = []Double{
	{Name: "cuda runtime double", backend: "cuda", typ: abi.DeviceCUDA, library: "fakecudart",
		env: func(t *testing.T) []string {
			return []string{"CDEVICE_CUDA_API=runtime", "CDEVICE_CUDA_LIBRARY=" + ctest.Path(t, "fakecudart")}
		}},
	{Name: "cuda driver API double", backend: "cuda", typ: abi.DeviceCUDA, library: "fakecuda_mixed",
		env: func(t *testing.T) []string {
			return []string{"CDEVICE_CUDA_API=driver", "CDEVICE_CUDA_DRIVER_LIBRARY=" + ctest.Path(t, "fakecuda_mixed")}
		}},
	{Name: "hip double", backend: "hip", typ: abi.DeviceROCm, library: "fakehip",
		env: func(t *testing.T) []string { return []string{"CDEVICE_HIP_LIBRARY=" + ctest.Path(t, "fakehip")} }},
	// chipStar has no batched copy; its double stands for it on a GPU
	// (an OpenCL device of type GPU), whose memory the host cannot read.
	{Name: "chipStar double", backend: "hip", typ: abi.DeviceROCm, library: "fakehip_chipstar",
		env: func(t *testing.T) []string {
			return []string{"CDEVICE_HIP_LIBRARY=" + ctest.Path(t, "fakehip_chipstar")}
		},
		setup: func(t *testing.T, path string) {
			lib, err := ffi.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			set, err := lib.Symbol("fake_chipstar_set_device")
			if err != nil {
				t.Fatal(err)
			}
			ffi.Call(set, 4, 0) // CL_DEVICE_TYPE_GPU
		}},
}

// doubleEnv marks a child process of EachDouble; its value names the
// double the child measures.
const doubleEnv = "CDEVICE_BUDGET_DOUBLE"

// EachDouble runs the test named child in a child process per double,
// whose CUDA or HIP backend is that double, and logs what the child logs
// from file.
func EachDouble(t *testing.T, child, file string) {
	for _, d := range Doubles {
		t.Run(d.Name, func(t *testing.T) {
			env := append(d.env(t), doubleEnv+"="+d.Name)
			cmd := selfexec.Command(env, "-test.run=^"+child+"$", "-test.v", "-test.count=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: "+child) {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, file) {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// A Measured double, in the child: its device, and readers of its costs
// and of what it holds live (allocations, streams, events).
type Measured struct {
	Dev   device.Device
	Costs func() Costs
	Live  func() []int64
}

// ChildDouble is the child side of EachDouble: it skips the test outside
// a child, else probes the child's double and returns it measured.
func ChildDouble(t *testing.T) Measured {
	name := os.Getenv(doubleEnv)
	if name == "" {
		t.Skip("child process of EachDouble")
	}
	var d Double
	for _, c := range Doubles {
		if c.Name == name {
			d = c
		}
	}
	path := ctest.Path(t, d.library)
	if d.setup != nil {
		d.setup(t, path)
	}
	costs, ok := CostsOf(path)
	if !ok {
		t.Fatalf("%s counts no costs", path)
	}
	for _, bk := range device.Backends() {
		if bk.Name() == d.backend {
			if _, err := bk.Probe(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	dev, err := device.Lookup(d.typ, 0)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := ffi.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var fns []uintptr
	for _, s := range []string{"fake_cuda_live_allocations", "fake_cuda_live_streams", "fake_cuda_live_events"} {
		fn, err := lib.Symbol(s)
		if err != nil {
			t.Fatal(err)
		}
		fns = append(fns, fn)
	}
	live := func() []int64 {
		var n []int64
		for _, fn := range fns {
			n = append(n, int64(ffi.Call(fn)))
		}
		return n
	}
	return Measured{Dev: dev, Costs: costs, Live: live}
}
