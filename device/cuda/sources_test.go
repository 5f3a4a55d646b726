package cuda_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/gpurt"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
)

// The backend tries the runtime, then the driver API: which serves, what
// Info says of the other, which error is reported when neither serves,
// and what the environment pins.
func TestSources(t *testing.T) {
	t.Setenv(cuda.EnvLibrary, "")
	t.Setenv(cuda.EnvDriverLibrary, "")
	t.Setenv(cuda.EnvAPI, "")
	const absent = "/nonexistent/libcuda-absent.so"
	backend := func(runtimes, drivers []string) *gpurt.Backend {
		return gpurt.NewBackend(false, gpurt.Source{Table: cuda.Runtime.Table, Candidates: gpurt.Paths(runtimes...)},
			gpurt.Source{Table: cuda.Driver.Table, Candidates: gpurt.Paths(drivers...)})
	}
	wantCall := func(t *testing.T, err error, sentinel error, call string) {
		t.Helper()
		var re *device.RuntimeError
		if !errors.Is(err, sentinel) || !errors.As(err, &re) || re.Call != call {
			t.Errorf("error %v; want %v from %s", err, sentinel, call)
		}
	}

	t.Run("RuntimeTooNew", func(t *testing.T) {
		newRuntime := cuda.Runtime
		newRuntime.Fake = "fakecudart_new" // CUDA 13 on a CUDA 12 driver
		gpurttest.NewFake(t, newRuntime, 1)
		newer := ctest.Path(t, "fakecudart_new")
		gpurttest.NewFake(t, cuda.Driver, 1)
		b := backend([]string{newer, newer}, []string{ctest.Path(t, "fakecuda")})
		info, err := b.Probe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if info.Version != "driver API 12.9" || len(info.Devices) != 3 ||
			!strings.HasPrefix(info.Note, "driver API, as the runtime API cannot serve: driver too old") {
			t.Errorf("info %+v", info)
		}
		if len(info.Skipped) != 1 || !strings.HasPrefix(info.Skipped[0], newer+": driver too old") {
			t.Errorf("skipped %q: want the runtime's second candidate", info.Skipped)
		}
	})

	t.Run("NeitherHasADevice", func(t *testing.T) {
		rf, df := gpurttest.NewFake(t, cuda.Runtime, 0), gpurttest.NewFake(t, cuda.Driver, 0)
		_, err := backend([]string{ctest.Path(t, "fakecudart")}, []string{ctest.Path(t, "fakecuda")}).Probe(context.Background())
		wantCall(t, err, device.ErrNoDevice, "cudaGetDeviceCount") // the runtime's: the first that found a library
		if rf.Call("fake_cuda_call_count", cstr(t, "cudaGetDeviceCount")) != 1 || df.Call("fake_cuda_call_count", cstr(t, "cuInit")) != 1 {
			t.Error("not both APIs were asked")
		}
	})

	t.Run("NoRuntimeNoDevice", func(t *testing.T) {
		gpurttest.NewFake(t, cuda.Driver, 0)
		_, err := backend([]string{absent}, []string{ctest.Path(t, "fakecuda")}).Probe(context.Background())
		wantCall(t, err, device.ErrNoDevice, "cuInit")
	})

	t.Run("NothingFound", func(t *testing.T) {
		_, err := backend([]string{absent}, []string{absent + ".1"}).Probe(context.Background())
		if msg := err.Error(); !errors.Is(err, device.ErrNotFound) || !strings.Contains(msg, "tried "+absent+";") ||
			!strings.Contains(msg, "driver API: not installed: tried "+absent+".1") {
			t.Errorf("error %v; want ErrNotFound naming both searches", err)
		}
	})

	// The runtime fails on GPU 1 and cannot give GPU 0's stream back at
	// once: the driver API serves with its own devices alone, and Close
	// gives back what the runtime kept too.
	t.Run("RuntimeFailsHalfWay", func(t *testing.T) {
		mixed := cuda.Runtime
		mixed.Fake = "fakecuda_mixed"
		f := gpurttest.NewFake(t, mixed, 2)
		f.Call("fake_cuda_fail", cstr(t, "cudaGetDeviceProperties_v2"), 2, 1)
		f.Call("fake_cuda_fail", cstr(t, "cudaStreamDestroy"), 2, 0)
		lib := ctest.Path(t, "fakecuda_mixed")
		b := backend([]string{lib}, []string{lib})
		info, err := b.Probe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Version != "driver API 12.9" || len(info.Devices) != 6 {
			t.Errorf("version %q, %d devices %v; want the driver API's 6", info.Version, len(info.Devices), info.Devices)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if s, c := f.Call("fake_cuda_live_streams"), f.Call("fake_cuda_live_contexts"); s != 0 || c != 0 {
			t.Errorf("after Close: %d streams, %d contexts live", s, c)
		}
	})

	// A variable naming one API's library pins that API: a wrong path is
	// reported, not passed over for the other API's library.
	t.Run("Pinned", func(t *testing.T) {
		df := gpurttest.NewFake(t, cuda.Driver, 1)
		driver := ctest.Path(t, "fakecuda")
		search := func() *gpurt.Backend {
			return gpurt.NewBackend(false, cuda.Runtime.Table.Source(func() []string { return nil }),
				cuda.Driver.Table.Source(func() []string { return []string{driver} }))
		}
		t.Setenv(cuda.EnvLibrary, absent)
		_, err := search().Probe(context.Background())
		if !errors.Is(err, device.ErrNotFound) || strings.Contains(err.Error(), "driver API") || df.Call("fake_cuda_call_count", cstr(t, "cuInit")) != 0 {
			t.Errorf("with %s set: %v; want its library alone tried", cuda.EnvLibrary, err)
		}
		t.Setenv(cuda.EnvLibrary, "")
		t.Setenv(cuda.EnvDriverLibrary, driver)
		b := search()
		info, err := b.Probe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if info.Note != "driver API, as "+cuda.EnvDriverLibrary+" names its library" {
			t.Errorf("note %q", info.Note)
		}
	})
}
