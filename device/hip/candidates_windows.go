package hip

import "github.com/purearrow/cdevice/internal/gpurt"

// platformCandidates: the HIP SDK's folder as its installer names it
// (HIP_PATH; its bin folder is not always on PATH), then the DLLs of HIP 7,
// 6 and 5 by name, which ffi.Open looks for in the application's folder
// and PATH's absolute folders, never the current directory.
func platformCandidates() []string {
	return append(gpurt.Libraries(nil, gpurt.Under("HIP_PATH", "bin", "amdhip64*.dll")),
		"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll")
}
