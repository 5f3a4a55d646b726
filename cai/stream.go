package cai

import (
	"github.com/purearrow/cdevice/device"
)

// waitStream makes s (nil: the host) wait for the work queued on the
// producer's stream, CAI stream value v, through the device's runtime
// (device.ForeignStreams).
func waitStream(dev device.Device, v int64, s device.Stream) error {
	fs, ok := dev.(device.ForeignStreams)
	if !ok {
		return unsupportedf("%v (%T) cannot wait for a stream it did not make (it is not a device.ForeignStreams)", dev, dev)
	}
	return fs.WaitForStream(handle(v), s)
}

// handle is the cudaStream_t of a CAI stream value: the NULL stream for
// the legacy default stream (which is what NULL means to the runtime's
// entry points without the _ptsz suffix, the ones the backends bind), the
// value itself otherwise (2 is cudaStreamPerThread).
func handle(v int64) uintptr {
	if v == StreamLegacy {
		return 0
	}
	return uintptr(v)
}
