package hip

import "github.com/purearrow/cdevice/internal/gpurt"

// platformCandidates: the DLLs of HIP 7, 6 and 5; the HIP SDK sets HIP_PATH,
// and its bin folder is not always on PATH.
func platformCandidates() []string {
	return gpurt.Libraries([]string{"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"},
		gpurt.Under("HIP_PATH", "bin", "amdhip64*.dll"))
}
