//go:build !windows && !darwin

package opencl

var defaultNames = []string{"libOpenCL.so.1", "libOpenCL.so"}
