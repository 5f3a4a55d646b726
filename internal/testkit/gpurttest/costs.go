package gpurttest

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/purearrow/cdevice/internal/ffi"
)

// Costs are what the CUDA test doubles count of what costs time on a GPU
// (fake_cuda_costs in testdata/c/fakecudart.c), since their reset.
type Costs struct {
	// RoundTrips: waits for the device (a synchronization that had to
	// wait for queued work, a copy into pageable memory).
	RoundTrips     int64
	PageableCopies int64 // copies into pageable host memory
	StreamsMade, StreamsDestroyed,
	EventsMade, EventsDestroyed int64
	DeviceSwitches int64 // SetDevice, the driver API's context calls
	Calls          int64 // every call of the runtime
	BatchedCopies  int64 // MemcpyBatchAsync calls that succeeded
}

// Minus is c less o: what happened between two readings.
func (c Costs) Minus(o Costs) Costs {
	return Costs{c.RoundTrips - o.RoundTrips, c.PageableCopies - o.PageableCopies, c.StreamsMade - o.StreamsMade,
		c.StreamsDestroyed - o.StreamsDestroyed, c.EventsMade - o.EventsMade, c.EventsDestroyed - o.EventsDestroyed,
		c.DeviceSwitches - o.DeviceSwitches, c.Calls - o.Calls, c.BatchedCopies - o.BatchedCopies}
}

func (c Costs) String() string {
	return fmt.Sprintf("%d round trips, %d pageable copies, streams +%d -%d, events +%d -%d, %d device switches, %d calls (%d batched copies)",
		c.RoundTrips, c.PageableCopies, c.StreamsMade, c.StreamsDestroyed, c.EventsMade, c.EventsDestroyed,
		c.DeviceSwitches, c.Calls, c.BatchedCopies)
}

// CostsOf returns a reader of the costs the library at path counts, and
// false where it is no test double (a real runtime, which counts nothing).
func CostsOf(path string) (func() Costs, bool) {
	lib, err := ffi.Open(path)
	if err != nil {
		return nil, false
	}
	fn, err := lib.Symbol("fake_cuda_costs")
	if err != nil {
		return nil, false
	}
	return func() Costs {
		const n = 9
		long := int(unsafe.Sizeof(uintptr(0))) // C's long, on every platform the suite runs on but Windows
		if runtime.GOOS == "windows" {
			long = 4
		}
		buf, err := ffi.Calloc(uintptr(n * long))
		if err != nil {
			panic(err)
		}
		defer ffi.Free(buf)
		ffi.Call(fn, uintptr(buf), n)
		var c [n]int64
		for i := range c {
			if long == 8 {
				c[i] = *(*int64)(unsafe.Add(buf, 8*i))
			} else {
				c[i] = int64(*(*int32)(unsafe.Add(buf, 4*i)))
			}
		}
		return Costs{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]}
	}, true
}

// SetLatency gives the double at path the latency of a GPU: round trip
// and call nanoseconds (fake_cuda_set_latency); 0, 0 takes it away.
func SetLatency(path string, roundTrip, call int64) error {
	lib, err := ffi.Open(path)
	if err != nil {
		return err
	}
	fn, err := lib.Symbol("fake_cuda_set_latency")
	if err != nil {
		return err
	}
	ffi.Call(fn, uintptr(roundTrip), uintptr(call))
	return nil
}
