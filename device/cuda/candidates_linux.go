package cuda

import "github.com/purearrow/cdevice/internal/gpurt"

// platformCandidates: the sonames of CUDA 13, 12 and 11 (the loader's
// search path), then the toolkit's own directory.
func platformCandidates() []string {
	return gpurt.Libraries([]string{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"},
		gpurt.Under("CUDA_PATH", "lib64", "libcudart.so*"), "/usr/local/cuda/lib64/libcudart.so*")
}

// driverCandidates: the driver's soname (the NVIDIA driver and the
// container toolkit install it), the development link, and WSL's copy,
// where a distribution's loader path lacks it.
func driverCandidates() []string {
	return gpurt.Libraries([]string{"libcuda.so.1", "libcuda.so"}, "/usr/lib/wsl/lib/libcuda.so.1")
}
