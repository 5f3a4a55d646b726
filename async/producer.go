package async

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
)

// A producer is the Go side of an ArrowAsyncProducer we drive a handler
// with. request and cancel only change its state and wake Produce, which
// makes every handler call itself, on its own goroutine.
//
// The C struct c outlives Produce: a consumer may call request or cancel
// for as long as it holds a task of ours, even after the end of the stream
// and after its handler's release returned (arrow-go's handler does: its
// task goroutine calls request(1) before each extract_data, on tasks still
// queued when release ran). So c, with the handle behind its private_data,
// is freed when the last of these references goes: Produce's own (dropped
// after the handler's release) and one per task handed out and not yet
// extracted. Until then request and cancel after the end are no-ops.
type producer struct {
	leak leak.Object
	c    *abi.AsyncProducer // off the Go heap: the consumer keeps it
	h    *abi.AsyncDeviceStreamHandler
	md   arrow.Metadata
	mdC  unsafe.Pointer
	pin  runtime.Pinner // a task's metadata, during its on_next_task
	wake chan struct{}
	refs atomic.Int64 // Produce + tasks not yet extracted; c is freed at 0

	mu        sync.Mutex
	credits   int64
	badN      int64 // a request(n <= 0) to report, or 0
	cancelled bool
	ended     bool // after the last on_next_task: request and cancel are no-ops
}

// A task is what an ArrowAsyncTask's private_data handle holds: the batch
// it hands over and the producer it keeps alive.
type task struct {
	b    *cdevice.DeviceRecordBatch
	p    *producer
	leak leak.Object // an exported batch until extracted or dropped
}

var (
	// request(producer*, int64_t n): the int64 takes one word on 64-bit
	// targets and two (aligned on arm) on 32-bit ones.
	requestCB = ffi.NewCallback4("ArrowAsyncProducer.request", func(pp, a, b, c uintptr) uintptr {
		if p := producerOf(pp); p != nil {
			p.request(int64(ffi.Uint64Arg([]uintptr{pp, a, b, c}, 1)))
		}
		return 0
	})
	cancelCB = ffi.NewCallback1("ArrowAsyncProducer.cancel", func(pp uintptr) uintptr {
		if p := producerOf(pp); p != nil {
			p.cancel()
		}
		return 0
	})
	extractCB = ffi.NewCallback2("ArrowAsyncTask.extract_data", func(tp, out uintptr) uintptr {
		return extract((*abi.AsyncTask)(abi.Pointer(tp)), out)
	})
)

func producerOf(pp uintptr) *producer {
	if pp == 0 {
		return nil
	}
	p, _ := ffi.Lookup[*producer]((*abi.AsyncProducer)(abi.Pointer(pp)).PrivateData)
	return p
}

func (p *producer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *producer) request(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.ended || p.cancelled:
	case n <= 0:
		if p.badN == 0 {
			p.badN = n - 1 // never 0: n <= 0
		}
		p.poke()
	default:
		p.credits += n
		p.poke()
	}
}

func (p *producer) cancel() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended {
		p.cancelled = true
		p.poke()
	}
}

// unref drops a reference to p (see producer); the last one frees the C
// struct, exactly once.
func (p *producer) unref() {
	if p.refs.Add(-1) != 0 {
		return
	}
	ffi.Handle(p.c.PrivateData).Delete()
	cdevice.Free(p.c)
	ffi.Free(p.mdC)
	p.leak.Done()
}

// newTask wraps b in a task handle, a reference to p.
func (p *producer) newTask(b *cdevice.DeviceRecordBatch) ffi.Handle {
	p.refs.Add(1)
	return ffi.NewHandle(&task{b: b, p: p, leak: leak.Track(leak.ExportedArray)})
}

// finish gives back what a task held once it is extracted or dropped: its
// batch (an export holds its own reference) and, last, its reference to
// the producer, which may free the producer.
func (k *task) finish() {
	k.leak.Done()
	k.b.Release()
	k.p.unref()
}

// dropTask takes back a task the consumer refused, unless it extracted
// it after all.
func dropTask(th ffi.Handle) {
	if v, ok := th.Delete(); ok {
		v.(*task).finish()
	}
}

// extract hands a task's batch over (exactly once; a NULL out discards it).
func extract(t *abi.AsyncTask, out uintptr) uintptr {
	v, ok := ffi.Handle(t.PrivateData).Delete()
	k, _ := v.(*task)
	if !ok || k == nil {
		return uintptr(cdevice.EINVAL) // a second call, or not our task
	}
	t.PrivateData = 0
	defer k.finish()
	if out == 0 {
		return 0
	}
	if err := k.b.Export((*abi.DeviceArray)(abi.Pointer(out)), nil); err != nil {
		return uintptr(cdevice.EIO)
	}
	return 0
}

// Produce drives the handler h from batches, device record batches of
// schema sc on devices of type deviceType, and takes ownership of each
// batch's DeviceRecordBatch the sequence yields. It populates h.producer,
// calls on_schema, then on_next_task only as far as the handler has
// requested (blocking, not spinning, while nothing is requested), each
// task's extract_data handing over its batch with its sync event, then
// on_next_task(NULL) and release. A batch's Metadata, when not empty, is
// its task's metadata: the metadata argument of its on_next_task call
// (valid for that call only, as the spec says), which a Handler delivers
// as its Batch's Metadata.
//
// The ArrowAsyncProducer it populates outlives the handler's release for
// as long as the consumer holds a task not yet extracted (request and
// cancel then do nothing), and is freed with the last one.
//
// It returns once the handler is released: nil when the stream ended or the
// handler cancelled it; the source's error or ctx's, reported through
// on_error first; or a *ConsumerError when a handler callback returned
// non-zero or the handler requested n <= 0 (that one reported through
// on_error too).
func Produce(ctx context.Context, sc *arrow.Schema, deviceType abi.DeviceType,
	batches iter.Seq2[Batch, error], h *abi.AsyncDeviceStreamHandler, opts ...ProduceOption) (err error) {
	if h == nil || h.Release == 0 {
		return fmt.Errorf("%w: Produce: nil or released handler", cdevice.ErrInvalid)
	}
	if h.OnSchema == 0 || h.OnNextTask == 0 || h.OnError == 0 {
		// Nothing can be said to it: it is released, as every handler
		// Produce is given.
		cdevice.ReleaseAsyncHandler(h)
		return fmt.Errorf("%w: Produce: the handler's on_schema, on_next_task or on_error is NULL", cdevice.ErrInvalid)
	}
	p := &producer{h: h, wake: make(chan struct{}, 1)}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(p)
		}
	}
	p.start(deviceType)
	defer p.finish()
	if sc == nil || batches == nil {
		what := "schema"
		if sc != nil {
			what = "batches"
		}
		err = fmt.Errorf("%w: Produce: must have non-nil %s", cdevice.ErrInvalid, what)
		p.onError(cdevice.EINVAL, err)
		return err
	}
	if err := p.sendSchema(sc); err != nil {
		return err
	}
	ct := cdevice.New[abi.AsyncTask]() // the consumer copies it during on_next_task
	defer cdevice.Free(ct)
	// Pull a batch only once one is requested: a cancel then wastes no copy,
	// and the end of the stream arrives on a requested slot too.
	next, stopSource := iter.Pull2(batches)
	defer stopSource()
	for {
		if stop, err := p.waitForRequest(ctx); stop {
			return err
		}
		bt, err, ok := next()
		if !ok {
			break
		}
		b := bt.DeviceRecordBatch
		if err == nil && b == nil {
			err = fmt.Errorf("%w: the batch source yielded a nil batch", cdevice.ErrInvalid)
		}
		if err != nil {
			if b != nil {
				b.Release()
			}
			p.onError(cdevice.ErrnoOf(err), err)
			return err
		}
		th := p.newTask(b)
		*ct = abi.AsyncTask{ExtractData: extractCB.Ptr(), PrivateData: uintptr(th)}
		if rc := p.nextTask(ct, bt.Metadata); rc != 0 {
			dropTask(th) // unless extracted, the consumer dropped it
			return &ConsumerError{Callback: "on_next_task", Code: int(rc)}
		}
	}
	p.mu.Lock()
	cancelled := p.cancelled
	p.ended = true
	p.mu.Unlock()
	if !cancelled {
		ffi.Call(h.OnNextTask, p.hp(), 0, 0) // the end of the stream
	}
	return nil
}

func (p *producer) hp() uintptr { return uintptr(unsafe.Pointer(p.h)) }

// nextTask calls on_next_task with task t and its metadata md. The encoded
// metadata is Go memory pinned for the call only: the spec makes it valid
// for the duration of on_next_task, so the handler copies what it keeps,
// and pinning costs no C allocation per batch.
func (p *producer) nextTask(t *abi.AsyncTask, md arrow.Metadata) int32 {
	var mdp uintptr
	if enc := cmeta.Encode(md); len(enc) > 0 {
		p.pin.Pin(&enc[0])
		defer p.pin.Unpin()
		mdp = uintptr(unsafe.Pointer(&enc[0]))
	}
	return int32(ffi.Call(p.h.OnNextTask, p.hp(), uintptr(unsafe.Pointer(t)), mdp))
}

// start populates handler->producer, as it must be before any callback.
func (p *producer) start(deviceType abi.DeviceType) {
	p.c = cdevice.New[abi.AsyncProducer]()
	*p.c = abi.AsyncProducer{DeviceType: deviceType, Request: requestCB.Ptr(), Cancel: cancelCB.Ptr()}
	if md := cmeta.Encode(p.md); len(md) > 0 {
		p.mdC, _ = ffi.Calloc(uintptr(len(md)))
		if p.mdC != nil {
			copy(unsafe.Slice((*byte)(p.mdC), len(md)), md)
			p.c.AdditionalMetadata = uintptr(p.mdC)
		}
	}
	p.c.PrivateData = uintptr(ffi.NewHandle(p))
	p.leak = leak.Track(leak.AsyncProducer)
	p.refs.Store(1) // Produce's, until finish
	p.h.Producer = uintptr(unsafe.Pointer(p.c))
}

// finish releases the handler, then drops Produce's reference to the
// producer, which the consumer may use until its release returns and for
// as long as it holds a task of ours.
func (p *producer) finish() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	cdevice.ReleaseAsyncHandler(p.h)
	p.unref()
}

func (p *producer) sendSchema(sc *arrow.Schema) error {
	s := cdevice.New[abi.Schema]()
	defer cdevice.Free(s)
	if err := cdevice.ExportSchema(sc, s); err != nil {
		p.onError(cdevice.EINVAL, err)
		return err
	}
	rc := int32(ffi.Call(p.h.OnSchema, p.hp(), uintptr(unsafe.Pointer(s))))
	cdevice.ReleaseSchema(s) // unless the handler released or moved it
	if rc != 0 {
		return &ConsumerError{Callback: "on_schema", Code: int(rc)}
	}
	return nil
}

// waitForRequest blocks until the handler has requested a task (and takes
// one), or says why to stop: cancelled (nil), a bad request or ctx done
// (reported through on_error).
func (p *producer) waitForRequest(ctx context.Context) (stop bool, err error) {
	for {
		if err := ctx.Err(); err != nil {
			p.onError(cdevice.ECANCELED, err)
			return true, err
		}
		p.mu.Lock()
		credits, bad, cancelled := p.credits, p.badN, p.cancelled
		if credits > 0 && bad == 0 && !cancelled {
			p.credits--
		}
		p.mu.Unlock()
		switch {
		case bad != 0:
			err := &ConsumerError{Callback: "request", Code: int(cdevice.EINVAL)}
			p.onError(cdevice.EINVAL, fmt.Errorf("request(%d): n must be positive", bad+1))
			return true, err
		case cancelled:
			return true, nil
		case credits > 0:
			return false, nil
		}
		select {
		case <-p.wake:
		case <-ctx.Done():
			p.onError(cdevice.ECANCELED, ctx.Err())
			return true, ctx.Err()
		}
	}
}

func (p *producer) onError(code cdevice.Errno, err error) {
	msg, _ := ffi.CString(err.Error())
	defer ffi.Free(msg)
	ffi.Call(p.h.OnError, p.hp(), uintptr(uint32(code)), uintptr(msg), 0)
}

// ProduceReader drives h with the batches of rdr, each copied to dev as the
// handler asks for it.
func ProduceReader(ctx context.Context, rdr array.RecordReader, dev device.Device, h *abi.AsyncDeviceStreamHandler, opts ...ProduceOption) error {
	if rdr == nil || dev == nil {
		return Produce(ctx, nil, abi.DeviceCPU, nil, h, opts...)
	}
	return Produce(ctx, rdr.Schema(), dev.Type(), Batches(cdevice.CopyReaderToDevice(ctx, rdr, dev)), h, opts...)
}

// Batches is a Produce source of seq's device record batches (such as
// cdevice.CopyReaderToDevice yields), without task metadata; nil for a nil
// seq.
func Batches(seq iter.Seq2[*cdevice.DeviceRecordBatch, error]) iter.Seq2[Batch, error] {
	if seq == nil {
		return nil
	}
	return func(yield func(Batch, error) bool) {
		for b, err := range seq {
			if !yield(Batch{DeviceRecordBatch: b}, err) {
				return
			}
		}
	}
}
