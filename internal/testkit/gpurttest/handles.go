package gpurttest

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/gpurt"
)

// Tests of what the doubles do as the real runtimes do, not more
// forgivingly: default-stream handles and the properties struct's size.

// The default-stream handles C code passes as a foreign stream: 0 and 1
// (the legacy default stream; HIP accepts 1 only from 6.2) and 2 (the
// per-thread default stream). A producer queues a copy on each, as C
// would; the device's host and stream waits for that handle see it done.
func testDefaultStreamHandles(t *testing.T, rt Runtime) {
	f := NewFake(t, rt, 1)
	d := f.Probe()[0]
	buf, err := d.Alloc(32)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seed, h := range []uintptr{0, 1, 2} {
		t.Run([]string{"null", "legacy", "per-thread"}[h], func(t *testing.T) {
			if h == 1 && rt.NoLegacyHandle {
				err := d.WaitForStream(h, nil)
				rt.wantRuntimeError(t, err, rt.sym(gpurt.StreamSynchronize), 400, "invalid resource handle")
				return
			}
			for _, consumer := range []device.Stream{nil, s} {
				src := cmem(t, 32)
				copy(unsafe.Slice((*byte)(src), 32), Pattern(32, byte(seed)))
				f.setDevice(0)
				if rc := f.memcpy(uintptr(buf), uintptr(src), 32, rt.Table.Memcpy.HostToDevice, h); rc != 0 {
					t.Fatalf("queueing on stream %d: %d", h, rc)
				}
				if err := d.WaitForStream(h, consumer); err != nil {
					t.Fatalf("WaitForStream(%d, %v): %v", h, consumer, err)
				}
				dst := make([]byte, 32)
				if err := d.CopyToHost(dst, buf, 0, s); err != nil {
					t.Fatal(err)
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dst, Pattern(32, byte(seed))) {
					t.Errorf("after waiting for stream %d (consumer %v): %v", h, consumer, dst[:8])
				}
			}
		})
	}
}

// The runtime's properties struct is as large as the real one (cudaDeviceProp
// 1032 bytes in CUDA 12, hipDeviceProp_tR0600 1472 in HIP 6): the probe's
// buffer takes it whole.
func testPropertiesSize(t *testing.T, rt Runtime) {
	if rt.driver() {
		t.Skip("the driver API reads the name alone (cuDeviceGetName)")
	}
	f := NewFake(t, rt, 1)
	f.Probe()
	if n := int(f.Call("fake_cuda_prop_size")); n != rt.PropSize || n > gpurt.PropBufSize {
		t.Errorf("the double wrote %d bytes of properties; the real struct has %d, the probe's buffer %d", n, rt.PropSize, gpurt.PropBufSize)
	}
}
