//go:build !linux && !windows

package cuda

// platformCandidates: NVIDIA ships no CUDA runtime for other systems (macOS
// lost it after CUDA 10.2); only an explicit $CDEVICE_CUDA_LIBRARY is tried.
func platformCandidates() []string { return nil }
