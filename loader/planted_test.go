package loader

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// noOverrides clears the variables that name a runtime or its folder, so
// that a child searches as on a machine where nobody set them.
var noOverrides = []string{"CDEVICE_CUDA_LIBRARY=", "CDEVICE_CUDA_DRIVER_LIBRARY=", "CDEVICE_CUDA_API=",
	"CDEVICE_HIP_LIBRARY=", "CDEVICE_OPENCL_LIBRARY=", "CUDA_PATH=", "HIP_PATH=", "ROCM_PATH="}

// A library that runs code as it is loaded (testdata/c/planted.c), under
// every name a runtime is looked for by, in the current directory and
// behind relative and empty entries of the platform's search list:
// discovery in a fresh process started there loads none of them.
func TestPlantedLibrariesAreNotLoaded(t *testing.T) {
	dir, env, marks := ctest.UnsafePlaces(t, ctest.RuntimeNames()...)
	out := runHelperIn(t, dir, append(slices.Clone(noOverrides), env...)...)
	for _, b := range out.Backends {
		t.Logf("%s: %s", b.Name, b.Reason)
	}
	if loaded := ctest.Loaded(t, marks); len(loaded) > 0 {
		t.Errorf("loaded from the current directory or a relative entry of %s: %v", ctest.SearchList(), loaded)
	}
	if runtime.GOOS != "windows" { // there a search never looks: nothing to refuse
		for _, b := range out.Backends {
			if !strings.Contains(b.Reason, "current directory") {
				t.Errorf("%s: %q does not say that the search was refused", b.Name, b.Reason)
			}
		}
	}
}

// The places a runtime is searched for still find it: the folders the
// toolkits' installers name (CUDA_PATH, HIP_PATH), an absolute entry of the
// search list, and on Windows System32 for the drivers' own DLLs.
func TestRuntimesFoundWhereAllowed(t *testing.T) {
	root := t.TempDir()
	marks := filepath.Join(root, "marks")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clone(noOverrides), ctest.PlantedMarks+"="+marks)
	var want []string
	switch runtime.GOOS {
	case "windows":
		ctest.Plant(t, filepath.Join(root, "cuda", "bin"), "cudart64_12.dll")
		ctest.Plant(t, filepath.Join(root, "hip", "bin"), "amdhip64_7.dll")
		ctest.Plant(t, filepath.Join(root, "path"), "cudart64_13.dll", "amdhip64_6.dll")
		// System32 is shown by nvcuda.dll; OpenCL.dll is found the same way
		// (ffi.OpenSystem), but under Wine its own OpenCL.dll, which CI
		// turns off (.ci/wine), stands in front of any in System32.
		ctest.PlantSystem32(t, "nvcuda.dll")
		env = append(env, "CUDA_PATH="+filepath.Join(root, "cuda"), "HIP_PATH="+filepath.Join(root, "hip"),
			"PATH="+filepath.Join(root, "path")+";"+os.Getenv("PATH"))
		want = []string{"amdhip64_6.dll", "amdhip64_7.dll", "cudart64_12.dll", "cudart64_13.dll", "nvcuda.dll"}
	default:
		ctest.Plant(t, filepath.Join(root, "cuda", "lib64"), "libcudart.so.12")
		ctest.Plant(t, filepath.Join(root, "path"), "libcudart.so.13", "libamdhip64.so.7", "libOpenCL.so.1")
		env = append(env, "CUDA_PATH="+filepath.Join(root, "cuda"),
			ctest.SearchList()+"="+filepath.Join(root, "path")+":"+os.Getenv(ctest.SearchList()))
		want = []string{"libOpenCL.so.1", "libamdhip64.so.7", "libcudart.so.12", "libcudart.so.13"}
	}
	out := runHelperIn(t, root, env...)
	for _, b := range out.Backends {
		t.Logf("%s: %s", b.Name, b.Reason)
	}
	if got := ctest.Loaded(t, marks); !slices.Equal(got, want) {
		t.Errorf("loaded %v, want %v", got, want)
	}
}
