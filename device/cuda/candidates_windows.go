package cuda

import (
	"os"
	"path/filepath"
)

// platformCandidates: the DLLs of CUDA 13, 12 and 11 (the DLL search path),
// then the toolkit's directory; newer toolkits may keep them in bin\x64.
func platformCandidates() []string {
	c := []string{"cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll"}
	if dir := os.Getenv("CUDA_PATH"); dir != "" {
		c = append(c, globNewestFirst(filepath.Join(dir, "bin", "cudart64_*.dll"))...)
		c = append(c, globNewestFirst(filepath.Join(dir, "bin", "x64", "cudart64_*.dll"))...)
	}
	return c
}
