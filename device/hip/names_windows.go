//go:build windows

package hip

import (
	"os"
	"path/filepath"
)

var sonames = []string{"amdhip64_6.dll", "amdhip64.dll"}

// globs: the HIP SDK sets HIP_PATH; its bin folder is not always on PATH.
func globs() []string {
	if root := os.Getenv("HIP_PATH"); root != "" {
		return []string{filepath.Join(root, "bin", "amdhip64*.dll")}
	}
	return nil
}
