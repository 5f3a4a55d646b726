// Package importtest is the one test of importing a C producer's device
// batches that every device backend runs on its real runtime (OpenCL on
// PoCL, HIP on chipStar, CUDA on a GPU): through a device stream and the
// async interface, each import's waits for the device counted and its
// values checked.
package importtest
