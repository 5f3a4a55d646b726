//go:build !windows

package hip

import "github.com/purearrow/cdevice/internal/gpurt"

// platformCandidates: the sonames of HIP 7, 6 and 5 (the loader's search
// path), then the install locations of a ROCm tree, for machines whose
// loader path does not include it.
func platformCandidates() []string {
	return gpurt.Libraries([]string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"},
		gpurt.Under("ROCM_PATH", "lib", "libamdhip64.so*"), "/opt/rocm/lib/libamdhip64.so*")
}
