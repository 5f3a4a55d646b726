package cai_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything is still held when all tests
// are done: cdevice's counters (testsupport.Main) and the CUDA test
// double's live allocations.
func TestMain(m *testing.M) {
	testsupport.Main(m, func() string {
		if d := theDouble; d != nil {
			if n := d.live(); n != 0 {
				return fmt.Sprintf("%d allocations live in the CUDA test double", n)
			}
		}
		return ""
	})
}

// fakeCUDA is CUDA memory as far as this package can tell: a device of
// type CUDA whose memory is the CPU's, with streams that have handles and
// a WaitForStream (device.ForeignStreams) that records what it was asked
// to wait for. It lets the
// tests run without gcc and check the stream rules exactly.
type fakeCUDA struct {
	device.Device // device.CPU
	id            int64

	mu      sync.Mutex
	waits   []wait
	waitErr error
}

type wait struct {
	stream   uintptr
	consumer uintptr // the consumer stream's handle; 0: the host
}

var nextHandle atomic.Uintptr

type fakeStream struct{ h uintptr }

func (s fakeStream) Handle() uintptr    { return s.h }
func (s fakeStream) Synchronize() error { return nil }
func (s fakeStream) Close() error       { return nil }

func newFakeCUDA(id int64) *fakeCUDA {
	d := &fakeCUDA{Device: device.CPU, id: id}
	device.Register(d)
	return d
}

func (d *fakeCUDA) Type() abi.DeviceType { return abi.DeviceCUDA }
func (d *fakeCUDA) ID() int64            { return d.id }
func (d *fakeCUDA) Name() string         { return fmt.Sprintf("fake cuda:%d", d.id) }

func (d *fakeCUDA) NewStream() (device.Stream, error) {
	return fakeStream{h: 0x1000 + nextHandle.Add(16)}, nil
}

func (d *fakeCUDA) WaitForStream(stream uintptr, s device.Stream) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := wait{stream: stream}
	if s != nil {
		w.consumer = s.Handle()
	}
	d.waits = append(d.waits, w)
	return d.waitErr
}

// MakeStreamWait completes device.ForeignStreams; Import does not use it.
func (d *fakeCUDA) MakeStreamWait(stream, syncEvent uintptr) error { return nil }

// takeWaits returns and forgets the waits recorded so far.
func (d *fakeCUDA) takeWaits() []wait {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.waits
	d.waits = nil
	return w
}

// fake is the shared fake CUDA device (cuda:7, clear of the double's).
var fake = newFakeCUDA(7)

// noWaiter is a CUDA-typed device that cannot wait for foreign streams.
type noWaiter struct{ device.Device }

func (noWaiter) Type() abi.DeviceType { return abi.DeviceCUDA }
func (noWaiter) ID() int64            { return 8 }

// double is the C test double of CUDA (testdata/c/fakecudart.c), loaded
// by cuda.Backend as the process's CUDA runtime; under
// $CDEVICE_CUDA_API=driver (TestDriverAPI) the double with both APIs,
// which the backend binds through the driver API.
type double struct {
	gpurttest.ProcessDouble
	lib                *ffi.Library
	dev, host, managed device.Device
}

var (
	doubleOnce sync.Once
	theDouble  *double
	doubleErr  error
)

// cudaDouble builds the double, points cuda.Backend at it and probes it:
// the first probe of this process, so its devices are registered as
// cuda:0, cuda_host:0 and cuda_managed:0. Without gcc the test is skipped
// (ctest's rule).
func cudaDouble(t testing.TB) *double {
	t.Helper()
	pd := gpurttest.UseCUDADouble(t) // skips without gcc
	doubleOnce.Do(func() {
		info, err := cuda.Backend.Probe(context.Background())
		if err == nil && pd.Driver != strings.HasPrefix(info.Version, "driver API") {
			err = fmt.Errorf("the backend serves through %q, not the API asked for", info.Version)
		}
		if err != nil {
			doubleErr = err
			return
		}
		lib, err := ffi.Open(pd.Path)
		if err != nil {
			doubleErr = err
			return
		}
		d := &double{ProcessDouble: pd, lib: lib}
		for _, dv := range info.Devices {
			switch dv.Type() {
			case abi.DeviceCUDA:
				d.dev = dv
			case abi.DeviceCUDAHost:
				d.host = dv
			case abi.DeviceCUDAManaged:
				d.managed = dv
			}
		}
		theDouble = d
	})
	if doubleErr != nil {
		t.Fatalf("probing the CUDA test double: %v", doubleErr)
	}
	return theDouble
}

// TestDriverAPI runs this package's tests again with the CUDA backend on
// the driver API (DLPack and CUDA Array Interface through libcuda).
func TestDriverAPI(t *testing.T) { gpurttest.RunThroughDriverAPI(t) }

func (d *double) call(name string, args ...uintptr) int64 {
	fn, err := d.lib.Symbol(name)
	if err != nil {
		panic(err)
	}
	return int64(ffi.Call(fn, args...))
}

func (d *double) pending() int64 { return d.call("fake_cuda_pending_ops") }

// calls is how many times the runtime function name was called (its
// driver API counterpart, under the driver API: see ProcessDouble.Call).
func (d *double) calls(name string) int64 {
	cs, err := ffi.CString(d.Call(name))
	if err != nil {
		panic(err)
	}
	defer ffi.Free(cs)
	return d.call("fake_cuda_call_count", uintptr(cs))
}
func (d *double) live() int64 { return d.call("fake_cuda_live_allocations") }
