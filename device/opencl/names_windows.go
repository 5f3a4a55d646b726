package opencl

var defaultNames = []string{"OpenCL.dll"}
