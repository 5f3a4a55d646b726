//go:build !windows

package hip

import (
	"os"
	"path/filepath"
)

var sonames = []string{"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}

// globs are the install locations of a ROCm tree, for machines whose loader
// path does not include it.
func globs() []string {
	var g []string
	if root := os.Getenv("ROCM_PATH"); root != "" {
		g = append(g, filepath.Join(root, "lib", "libamdhip64.so*"))
	}
	return append(g, "/opt/rocm/lib/libamdhip64.so*")
}
