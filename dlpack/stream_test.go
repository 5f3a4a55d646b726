package dlpack_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestConsumerStream: WithStreamHandle on each device.
func TestConsumerStream(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	vals := valueBytes(dtF64, 0, 64)
	a := fromBytes(t, f64, 64, vals)

	t.Run("cpu", func(t *testing.T) { // no event: the stream is ignored
		mt, err := dlpack.Export(context.Background(), onDevice(t, a, cpuDev), dlpack.WithStreamHandle(0x1234))
		must(t, err)
		mt.Delete()
	})

	t.Run("opencl", func(t *testing.T) {
		c, dev := loadCOpenCL(t)
		da := onDevice(t, a, dev)
		for _, s := range []uintptr{dev.CommandQueue(), 0, dlpack.NoSync} {
			mt, err := dlpack.Export(context.Background(), da, dlpack.WithStreamHandle(s))
			must(t, err)
			sp := spec{versioned: true, svm: dev.UsesSVM(), devType: abi.DeviceOpenCL, devID: int32(dev.ID()),
				dtype: dtF64, shape: []int64{64}, strides: []int64{1}, flags: dlpack.FlagReadOnly}
			if rc := c.consume(sp.params(t), mt.Addr(), cbytes(t, vals), dev.CommandQueue()); rc != 0 {
				t.Fatalf("C consumer on the named queue: %d", rc)
			}
		}
	})

	// HIP's rules are CUDA's (the counting is done on CUDA's double above):
	// on a real runtime, a consumer reading on its own stream s, or on the
	// host after a wait of the host (0), or with NoSync after its own wait,
	// reads the array's values.
	t.Run("rocm", func(t *testing.T) {
		dev := testsupport.BackendDevice(t, "hip")
		da := onDevice(t, a, dev)
		s, err := dev.NewStream()
		must(t, err)
		defer s.Close()
		h := s.(interface{ Handle() uintptr }).Handle()
		for _, cs := range []uintptr{h, 0, dlpack.NoSync} {
			mt, err := dlpack.Export(context.Background(), da, dlpack.WithStreamHandle(cs))
			must(t, err)
			if cs == dlpack.NoSync {
				must(t, dev.WaitSyncEvent(context.Background(), da.SyncEvent(), nil))
			}
			got := make([]byte, len(vals))
			tn := &mt.DLTensor
			must(t, dev.CopyToHost(got, device.Pointer(tn.Data), int(tn.ByteOffset), s))
			must(t, s.Synchronize())
			mt.Delete()
			if !bytes.Equal(got, vals) {
				t.Errorf("consumer stream %#x: the consumer read other values", cs)
			}
		}
	})

	t.Run("cuda", func(t *testing.T) {
		dev, fake := cudaDevice(t)
		if fake == nil {
			t.Skip("the counters need the CUDA test double")
		}
		da := onDevice(t, a, dev)
		create, err := fake.Symbol("cudaStreamCreateWithFlags")
		must(t, err)
		destroy, err := fake.Symbol("cudaStreamDestroy")
		must(t, err)
		slot, err := ffi.Calloc(8)
		must(t, err)
		defer ffi.Free(slot)
		if rc := int32(ffi.Call(create, uintptr(slot), 1)); rc != 0 {
			t.Fatalf("cudaStreamCreateWithFlags: %d", rc)
		}
		stream := *(*uintptr)(slot)
		defer ffi.Call(destroy, stream)

		waits := func() (device, host int64) {
			return fakeCalls(t, fake, "cudaStreamWaitEvent"), fakeCalls(t, fake, "cudaEventSynchronize")
		}
		for _, c := range []struct {
			stream       uintptr
			device, host int64
		}{
			{stream, 1, 0},        // the consumer's stream waits for the ready event on the device
			{0, 0, 1},             // no stream named: the host waits
			{dlpack.NoSync, 0, 0}, // no synchronization asked for
		} {
			dev0, host0 := waits()
			mt, err := dlpack.Export(context.Background(), da, dlpack.WithStreamHandle(c.stream))
			must(t, err)
			mt.Delete()
			if dev, host := waits(); dev-dev0 != c.device || host-host0 != c.host {
				t.Errorf("stream %#x: %d waits on the device, %d on the host; want %d, %d",
					c.stream, dev-dev0, host-host0, c.device, c.host)
			}
		}
		dev0, host0 := waits()
		mt, err := dlpack.Export(context.Background(), da)
		must(t, err)
		mt.Delete()
		if dev, host := waits(); dev != dev0 || host != host0 {
			t.Fatalf("%d waits without a consumer stream", dev-dev0+host-host0)
		}
	})
}

// TestOpenCLClMem runs the OpenCL tests again in a child process with
// CDEVICE_OPENCL_SVM=0, so that both buffer conventions (SVM pointers and
// cl_mem handles) are exercised: a cl_mem cannot be offset, so byte_offset
// must carry every offset.
func TestOpenCLClMem(t *testing.T) {
	if os.Getenv("CDEVICE_OPENCL_SVM") == "0" {
		t.Skip("this is the cl_mem run")
	}
	dev, _ := openclDevice(t)
	if !dev.UsesSVM() {
		t.Skip("the device uses cl_mem handles already: the other tests covered them")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^(TestRoundTrip|TestCProducer|TestCConsumer|TestConsumerStream|TestOpenCLMode)", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "CDEVICE_OPENCL_SVM=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cl_mem run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestOpenCLMode") || strings.Contains(string(out), "--- SKIP: TestOpenCLMode") {
		t.Fatalf("the cl_mem run did not run on OpenCL:\n%s", out)
	}
	t.Logf("cl_mem run: %d tests passed", strings.Count(string(out), "--- PASS"))
}

// TestOpenCLMode checks that CDEVICE_OPENCL_SVM=0 took effect.
func TestOpenCLMode(t *testing.T) {
	dev, _ := openclDevice(t)
	if want := os.Getenv("CDEVICE_OPENCL_SVM") != "0"; dev.UsesSVM() != want && !want {
		t.Fatalf("CDEVICE_OPENCL_SVM=0 but the device uses SVM")
	}
	t.Logf("opencl:%d uses SVM: %v", dev.ID(), dev.UsesSVM())
}
