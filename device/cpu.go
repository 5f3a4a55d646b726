package device

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
)

// CPU is the host: device type CPU, id -1 (as the C Device Data Interface
// gives it). Its memory is Go memory, pinned from Alloc to Free since C may
// read it; copies are synchronous, so streams and events have nothing to
// wait for.
var CPU Device = &cpuDevice{blocks: map[Pointer]*runtime.Pinner{}}

type cpuDevice struct {
	mu     sync.Mutex
	blocks map[Pointer]*runtime.Pinner
}

func (*cpuDevice) Type() abi.DeviceType { return abi.DeviceCPU }
func (*cpuDevice) ID() int64            { return -1 }
func (*cpuDevice) Name() string         { return "cpu" }
func (*cpuDevice) HostAccessible() bool { return true }

func (c *cpuDevice) Alloc(size int) (Pointer, error) {
	if size <= 0 {
		return 0, fmt.Errorf("%w: device: cpu: Alloc(%d): size must be positive", ErrInvalid, size)
	}
	b := make([]byte, size)
	pin := new(runtime.Pinner)
	pin.Pin(&b[0])
	p := Pointer(unsafe.Pointer(&b[0]))
	c.mu.Lock()
	c.blocks[p] = pin
	c.mu.Unlock()
	return p, nil
}

func (c *cpuDevice) Free(p Pointer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	pin, ok := c.blocks[p]
	if !ok {
		return fmt.Errorf("%w: device: cpu: Free(%#x): not allocated by Alloc", ErrInvalid, uintptr(p))
	}
	delete(c.blocks, p)
	pin.Unpin()
	return nil
}

func hostBytes(p Pointer, off, n int) []byte {
	return unsafe.Slice((*byte)(abi.Pointer(uintptr(p)+uintptr(off))), n)
}

func (*cpuDevice) CopyToDevice(dst Pointer, off int, src []byte, _ Stream) error {
	copy(hostBytes(dst, off, len(src)), src)
	return nil
}

func (*cpuDevice) CopyToHost(dst []byte, src Pointer, off int, _ Stream) error {
	copy(dst, hostBytes(src, off, len(dst)))
	return nil
}

func (*cpuDevice) CopyOnDevice(dst Pointer, dstOff int, src Pointer, srcOff, n int, _ Stream) error {
	copy(hostBytes(dst, dstOff, n), hostBytes(src, srcOff, n))
	return nil
}

type cpuStream struct{}

func (cpuStream) Handle() uintptr    { return 0 }
func (cpuStream) Synchronize() error { return nil }
func (cpuStream) Close() error       { return nil }

type cpuEvent struct{}

func (cpuEvent) Record(Stream) error { return nil }
func (cpuEvent) Synchronize() error  { return nil }
func (cpuEvent) SyncEvent() uintptr  { return 0 }
func (cpuEvent) Close() error        { return nil }

func (*cpuDevice) NewStream() (Stream, error) { return cpuStream{}, nil }
func (*cpuDevice) NewEvent() (Event, error)   { return cpuEvent{}, nil }

func (*cpuDevice) WaitSyncEvent(_ context.Context, syncEvent uintptr, _ Stream) error {
	if syncEvent != 0 {
		return fmt.Errorf("%w: device: cpu: a CPU array has a sync_event (%#x); it must be NULL", ErrInvalid, syncEvent)
	}
	return nil
}

// MemoryInfo reports the Go runtime's view: it does not know the machine's
// free memory, so it returns zeros.
func (*cpuDevice) MemoryInfo() (free, total int64, err error) { return 0, 0, nil }
