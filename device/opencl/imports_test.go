package opencl_test

import (
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/importtest"
)

// A C producer's device batches imported on the OpenCL runtime (PoCL in
// CI), in each buffer mode: one wait for the device an import, one for
// all the tasks an async Next finds queued (none where the host reads
// the memory in place: PoCL's SVM).
func TestDeviceImports(t *testing.T) {
	for mode, d := range modes(t) {
		t.Run(mode, func(t *testing.T) { importtest.DeviceImports(t, d) })
	}
}
