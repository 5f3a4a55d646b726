package cuda

import (
	"os"
	"path/filepath"
)

// platformCandidates: the sonames of CUDA 13, 12 and 11 (the loader's
// search path), then the toolkit's own directory.
func platformCandidates() []string {
	c := []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}
	for _, dir := range []string{os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if dir != "" {
			c = append(c, globNewestFirst(filepath.Join(dir, "lib64", "libcudart.so*"))...)
		}
	}
	return c
}
