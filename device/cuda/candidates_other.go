//go:build !linux && !windows

package cuda

// platformCandidates and driverCandidates: NVIDIA ships no CUDA for other
// systems (macOS lost it after CUDA 10.2); only an explicit
// $CDEVICE_CUDA_LIBRARY or $CDEVICE_CUDA_DRIVER_LIBRARY is tried.
func platformCandidates() []string { return nil }

func driverCandidates() []string { return nil }
