package gpurttest

import (
	"os"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// device/cuda's environment variables (this package cannot import it).
const (
	envAPI           = "CDEVICE_CUDA_API"
	envLibrary       = "CDEVICE_CUDA_LIBRARY"
	envDriverLibrary = "CDEVICE_CUDA_DRIVER_LIBRARY"
)

// A ProcessDouble is the CUDA test double that a package's tests make the
// process's CUDA backend load, through the API $CDEVICE_CUDA_API names.
type ProcessDouble struct {
	Path string // the double's library, for its control functions
	// Driver: the backend binds the driver API, from the double with both
	// APIs (fakecuda_mixed.c), while the tests' C producers call the
	// runtime's functions as C code would.
	Driver bool
}

// UseCUDADouble builds the double and points the CUDA backend's variable
// at it: the runtime's (fakecudart.c, $CDEVICE_CUDA_LIBRARY), or with
// $CDEVICE_CUDA_API=driver the one with both APIs
// ($CDEVICE_CUDA_DRIVER_LIBRARY). Call it before the backend's first
// probe. Without gcc the test skips (ctest's rule).
func UseCUDADouble(t testing.TB) ProcessDouble {
	t.Helper()
	if os.Getenv(envAPI) == "driver" {
		d := ProcessDouble{Path: ctest.Path(t, "fakecuda_mixed"), Driver: true}
		os.Setenv(envDriverLibrary, d.Path)
		return d
	}
	d := ProcessDouble{Path: ctest.Path(t, "fakecudart")}
	os.Setenv(envLibrary, d.Path)
	return d
}

// Call is the name of the backend's call for the runtime's function name:
// cuStreamSynchronize for cudaStreamSynchronize under the driver API. It
// knows the calls the tests count, and panics for another.
func (d ProcessDouble) Call(name string) string {
	if !d.Driver {
		return name
	}
	driverName, ok := map[string]string{
		"cudaStreamSynchronize": "cuStreamSynchronize",
		"cudaStreamWaitEvent":   "cuStreamWaitEvent",
		"cudaEventSynchronize":  "cuEventSynchronize",
		"cudaEventQuery":        "cuEventQuery",
		"cudaEventRecord":       "cuEventRecord",
	}[name]
	if !ok {
		panic("gpurttest: no driver API name known for " + name)
	}
	return driverName
}

// RunThroughDriverAPI runs this test binary again with
// $CDEVICE_CUDA_API=driver, every test but the caller's, so that a
// package's tests on the double run through the driver API too; in that
// child it does nothing.
func RunThroughDriverAPI(t *testing.T) {
	if os.Getenv(envAPI) == "driver" {
		t.Skip("this is the run through the driver API")
	}
	cmd := selfexec.Command([]string{envAPI + "=driver"}, "-test.skip=^"+t.Name()+"$", "-test.count=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests through the driver API failed: %v\n%s", err, out)
	}
}
