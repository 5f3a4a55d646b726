package cuda

import "github.com/purearrow/cdevice/internal/gpurt"

// platformCandidates: the DLLs of CUDA 13, 12 and 11 (the DLL search path),
// then the toolkit's directory; newer toolkits may keep them in bin\x64.
func platformCandidates() []string {
	return gpurt.Libraries([]string{"cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll"},
		gpurt.Under("CUDA_PATH", "bin", "cudart64_*.dll"), gpurt.Under("CUDA_PATH", "bin", "x64", "cudart64_*.dll"))
}

// driverCandidates: the driver's DLL, in System32.
func driverCandidates() []string { return []string{"nvcuda.dll"} }
