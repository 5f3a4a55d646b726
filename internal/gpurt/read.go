package gpurt

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// ReadValues reads small values from device memory, what an import needs
// to size its buffers, in one round trip however many there are: one
// device switch; the GPU's staging stream made to wait for the producer's
// event on the device; every value copied into page-locked staging memory
// (one MemcpyBatchAsync where the runtime has it, one MemcpyAsync a value
// elsewhere); one StreamSynchronize. A copy into pageable memory would
// return only once done (a round trip each), which is why the staging is
// the runtime's pinned host memory.

// stagingSlots is what a staging holds when it is made, in values.
const stagingSlots = 64

// A staging is what ReadValues reads through: a stream of its own, memory
// the values land in (8 bytes a value) and room for a batched copy's
// arguments. The first ReadValues on a GPU makes one; the GPU keeps the
// ones it made (one, unless imports overlap) for reuse, and gives them
// back when it closes.
type staging struct {
	stream uintptr
	// pinned is the runtime's page-locked host memory; nil where the
	// runtime offers none, and heap, Go memory, serves instead (pinned for
	// the Go collector while copies may write it; pageable for the
	// runtime, so that each copy into it returns only once done).
	pinned unsafe.Pointer
	heap   []uint64
	// args are MemcpyBatchAsync's dsts, srcs and sizes (slots each), then
	// its attributes (batchWords), their index and failIdx: read during the
	// call only, so Go memory pinned for it.
	args  []uintptr
	slots int
}

// batchAttrs is cudaMemcpyAttributes (CUmemcpyAttributes,
// hipMemcpyAttributes): the source read in stream order (after the wait for
// the producer), a device's memory to host memory.
type batchAttrs struct {
	srcAccessOrder int32 // cudaMemcpySrcAccessOrderStream: 1
	srcLoc, dstLoc struct {
		typ, id int32 // cudaMemLocationTypeDevice 1, cudaMemLocationTypeHost 2
	}
	flags uint32
}

const (
	accessOrderStream = 1
	locationDevice    = 1
	locationHost      = 2
	// batchWords is the words of args beyond the three arrays: the
	// attributes (24 bytes), their index and failIdx.
	batchWords = 5
)

// A stagingPool is a GPU's stagings: those not in use.
type stagingPool struct {
	mu   sync.Mutex
	free []*staging
}

// newStaging makes a staging of slots values. The GPU must be current.
func (g *gpu) newStaging(slots int) (*staging, error) {
	st := &staging{}
	var err error
	if st.stream, err = g.r.newStream(); err != nil {
		return nil, err
	}
	if err = st.alloc(g, slots); err != nil {
		g.r.destroy(StreamDestroy, st.stream)
		return nil, err
	}
	return st, nil
}

// alloc gives st room for slots values: the runtime's pinned host memory,
// or Go memory where the runtime offers none. The GPU must be current.
func (st *staging) alloc(g *gpu, slots int) error {
	if k := g.r.hostKind(); k >= 0 {
		o := newOut()
		defer o.release()
		if err := g.r.call(g.r.kinds[k].alloc, append([]uintptr{o.ptr(0), uintptr(8 * slots)}, g.r.t.Kinds[k].AllocArgs...)...); err != nil {
			return err
		}
		st.pinned = abi.Pointer(o.uintptr(0))
	} else {
		st.heap = make([]uint64, slots)
	}
	st.args, st.slots = make([]uintptr, 3*slots+batchWords), slots
	return nil
}

// free gives back st's memory (and not its stream); where the runtime
// fails to free it, st keeps it, to free again. The GPU must be current.
func (st *staging) free(g *gpu) error {
	if st.pinned != nil {
		if err := g.r.call(g.r.kinds[g.r.hostKind()].free, uintptr(st.pinned)); err != nil {
			return err
		}
	}
	st.pinned, st.heap, st.args, st.slots = nil, nil, nil, 0
	return nil
}

// values is where the values land.
func (st *staging) values() unsafe.Pointer {
	if st.pinned != nil {
		return st.pinned
	}
	return unsafe.Pointer(&st.heap[0])
}

// hostKind is the index of the table's pinned host memory where the
// library offers it, else -1.
func (r *Runtime) hostKind() int {
	for i, k := range r.t.Kinds {
		if k.Memory == HostMemory && len(r.kinds[i].missing) == 0 {
			return i
		}
	}
	return -1
}

// take returns a staging of at least n values: one the GPU keeps, grown
// where too small, or a new one when every one is in use. The GPU must be
// current (only growing and making call the runtime).
func (g *gpu) take(n int) (*staging, error) {
	p := &g.staging
	p.mu.Lock()
	var st *staging
	if k := len(p.free); k > 0 {
		st, p.free = p.free[k-1], p.free[:k-1]
	}
	p.mu.Unlock()
	if st == nil {
		return g.newStaging(max(n, stagingSlots))
	}
	if st.slots < n {
		grow := max(n, 2*st.slots)
		if err := st.free(g); err != nil {
			g.put(st) // kept whole, to free at close
			return nil, err
		}
		if err := st.alloc(g, grow); err != nil {
			g.drop(st)
			return nil, err
		}
	}
	return st, nil
}

// put gives st back for reuse; its copies are done.
func (g *gpu) put(st *staging) {
	g.staging.mu.Lock()
	g.staging.free = append(g.staging.free, st)
	g.staging.mu.Unlock()
}

// drop gives back st's memory, then destroys its stream: a destroy that
// fails is tried once more, and the handle is gone either way (see
// Runtime.destroy); memory the runtime fails to free is kept, to drop
// again. The GPU must be current.
func (g *gpu) drop(st *staging) error {
	if err := st.free(g); err != nil {
		return err
	}
	if st.stream == 0 {
		return nil
	}
	err := g.r.destroy(StreamDestroy, st.stream)
	st.stream = 0
	return err
}

// closeStaging drops every staging the GPU keeps; one that fails to drop
// stays, for the next close. The GPU must be current.
func (g *gpu) closeStaging() error {
	p := &g.staging
	p.mu.Lock()
	defer p.mu.Unlock()
	var left []*staging
	var first error
	for _, st := range p.free {
		if err := g.drop(st); err != nil {
			if st.stream != 0 { // its memory is still to free
				left = append(left, st)
			}
			if first == nil {
				first = err
			}
		}
	}
	p.free = left
	return first
}

// ReadValues reads each value (device.ValueReader): see the top of this
// file. With a ctx that can be done, an event still running is waited for
// by the host (polling it, as WaitSyncEvent does), so that ctx bounds the
// wait; the reads themselves end by themselves.
func (d *Device) ReadValues(ctx context.Context, syncEvents []uintptr, reads []device.ValueRead) error {
	if err := d.readValues(ctx, syncEvents, reads); err != nil {
		return fmt.Errorf("%v: ReadValues(%d values): %w", d, len(reads), err)
	}
	return nil
}

func (d *Device) readValues(ctx context.Context, syncEvents []uintptr, reads []device.ValueRead) error {
	for _, r := range reads {
		if r.Ptr == 0 || r.Off < 0 || (r.Width != 2 && r.Width != 4 && r.Width != 8) {
			return fmt.Errorf("%w: a read of %d bytes at %#x+%d", device.ErrInvalid, r.Width, uintptr(r.Ptr), r.Off)
		}
	}
	var evs []uintptr // the events behind syncEvents
	for _, se := range syncEvents {
		if se == 0 {
			continue
		}
		ev := *(*uintptr)(abi.Pointer(se))
		if ev == 0 {
			return fmt.Errorf("%w: sync_event %#x points to a NULL event", device.ErrInvalid, se)
		}
		evs = append(evs, ev)
	}
	g := d.g
	if len(reads) == 0 || ctx.Done() != nil && len(evs) > 0 {
		// With a ctx that can be done the host waits, bounded by ctx, for
		// whatever is still running (one query each, usually done).
		busy := false
		err := g.on(func() error {
			for _, ev := range evs {
				ready, err := g.r.Ready(EventQuery, ev)
				if err != nil || !ready {
					busy = err == nil
					return err
				}
			}
			if len(reads) == 0 {
				return nil
			}
			return d.readStaged(nil, reads)
		})
		if !busy {
			return err
		}
		for _, se := range syncEvents {
			if err := d.waitEvent(ctx, se, nil); err != nil {
				return err
			}
		}
		evs = nil
	}
	if len(reads) == 0 {
		return nil
	}
	return g.on(func() error { return d.readStaged(evs, reads) })
}

// readStaged reads the values through a staging of the GPU's, after evs on
// the device. The GPU must be current.
func (d *Device) readStaged(evs []uintptr, reads []device.ValueRead) error {
	g := d.g
	st, err := g.take(len(reads))
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&st.args[0])
	if st.heap != nil {
		pin.Pin(&st.heap[0])
	}
	if err := d.readOn(st, evs, reads); err != nil {
		// What was queued may still write: wait for it before the
		// staging serves again (a stream the runtime refuses to
		// synchronize is not used again).
		if g.r.Call(StreamSynchronize, st.stream) != nil {
			g.drop(st)
			return err
		}
		g.put(st)
		return err
	}
	g.put(st)
	host := unsafe.Slice((*byte)(st.values()), 8*len(reads))
	for i := range reads {
		reads[i].Set(host[8*i:])
	}
	return nil
}

// readOn queues the reads on st after evs and waits for them. The GPU
// must be current.
func (d *Device) readOn(st *staging, evs []uintptr, reads []device.ValueRead) error {
	r := d.g.r
	for _, ev := range evs {
		if err := r.Call(StreamWaitEvent, st.stream, ev, 0); err != nil {
			return err
		}
	}
	host := uintptr(st.values())
	if r.Has(MemcpyBatchAsync) {
		if err := d.batch(st, reads); err != nil {
			return err
		}
	} else {
		kind := d.memcpyKind(r.t.Memcpy.DeviceToHost)
		for i, rd := range reads {
			if err := r.memcpy(host+uintptr(8*i), uintptr(rd.Ptr)+uintptr(rd.Off), uintptr(rd.Width), kind, st.stream); err != nil {
				return err
			}
		}
	}
	return r.Call(StreamSynchronize, st.stream)
}

// batch queues every read with one MemcpyBatchAsync, its arguments in
// st.args (pinned by the caller).
func (d *Device) batch(st *staging, reads []device.ValueRead) error {
	r, n, host := d.g.r, len(reads), uintptr(st.values())
	dsts, srcs, sizes, rest := st.args[:n], st.args[st.slots:st.slots+n], st.args[2*st.slots:2*st.slots+n], st.args[3*st.slots:]
	for i, rd := range reads {
		dsts[i] = host + uintptr(8*i)
		srcs[i] = uintptr(rd.Ptr) + uintptr(rd.Off)
		sizes[i] = uintptr(rd.Width)
	}
	attrs := (*batchAttrs)(unsafe.Pointer(&rest[0]))
	*attrs = batchAttrs{srcAccessOrder: accessOrderStream}
	attrs.srcLoc.typ, attrs.srcLoc.id = locationDevice, int32(d.g.ordinal)
	attrs.dstLoc.typ = locationHost
	rest[3] = 0 // attrsIdxs: the attributes serve every copy from the first
	args := []uintptr{uintptr(unsafe.Pointer(&dsts[0])), uintptr(unsafe.Pointer(&srcs[0])), uintptr(unsafe.Pointer(&sizes[0])),
		uintptr(n), uintptr(unsafe.Pointer(attrs)), uintptr(unsafe.Pointer(&rest[3])), 1}
	if r.batchFailIdx() {
		args = append(args, uintptr(unsafe.Pointer(&rest[4])))
	}
	return r.Call(MemcpyBatchAsync, append(args, st.stream)...)
}

// batchFailIdx reports whether the bound MemcpyBatchAsync takes a failIdx
// argument before its stream (Table.BatchFailIdxBefore).
func (r *Runtime) batchFailIdx() bool {
	if r.t.API == DriverAPI {
		return !strings.HasSuffix(r.fn[MemcpyBatchAsync].name, "_v2")
	}
	return r.t.BatchFailIdxBefore == 0 || r.runtimeVersion < r.t.BatchFailIdxBefore
}
