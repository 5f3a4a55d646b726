package opencl

var defaultNames = []string{"/System/Library/Frameworks/OpenCL.framework/OpenCL"}
