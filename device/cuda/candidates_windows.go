package cuda

import "github.com/purearrow/cdevice/internal/gpurt"

// platformCandidates: the toolkit's folder as its installer names it
// (CUDA_PATH; newer toolkits keep the DLLs in bin\x64), then the DLLs of
// CUDA 13, 12 and 11 by name, which ffi.Open looks for in the
// application's folder and PATH's absolute folders, never the current
// directory.
func platformCandidates() []string {
	return append(gpurt.Libraries(nil, gpurt.Under("CUDA_PATH", "bin", "cudart64_*.dll"), gpurt.Under("CUDA_PATH", "bin", "x64", "cudart64_*.dll")),
		"cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll")
}

// driverCandidates: the driver's DLL, which the NVIDIA driver installs in
// System32 and only there is looked for (driverTable.SystemLibrary).
func driverCandidates() []string { return []string{"nvcuda.dll"} }
