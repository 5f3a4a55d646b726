package async

import (
	"context"
	"fmt"
	"io"
	"iter"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/leak"
)

// A Handler is an ArrowAsyncDeviceStreamHandler that a producer drives: it
// takes the schema, queues the tasks the producer hands over (requesting
// more as they are consumed), and records the end, an error, or release.
// Next and All are for one consumer goroutine; Cancel, Close and Done may be
// called from any.
type Handler struct {
	leak    leak.Object
	c       *abi.AsyncDeviceStreamHandler // off the Go heap or the caller's: the producer keeps it
	callerC bool                          // c is the caller's (WithHandlerStruct): release leaves it
	out     *outStruct                    // off the Go heap: extract_data writes it
	depth   int64
	wake    chan struct{} // a task, the end, an error or release arrived
	schema  chan struct{} // closed once the schema is known or never will be
	done    chan struct{} // closed at release

	// calling is held (read) around every call into the producer and
	// (write) by release, so the producer is never called once released:
	// it frees itself then; and (write) by Cancel while it sets cancelled,
	// so no request is in flight once the producer hears of the cancel.
	// It is not mu, because the producer may call on_error from within
	// cancel, and that takes mu.
	calling  sync.RWMutex
	producer uintptr // *ArrowAsyncProducer; 0 once released (under calling)

	mu        sync.Mutex
	inCalls   int           // calls into the producer in flight
	idle      chan struct{} // closed when inCalls drops to 0, for endOfStream
	sc        *arrow.Schema
	schemaErr error
	addMD     arrow.Metadata
	queue     []queued
	ready     []imported // imported with an earlier Next's batch, not yet delivered
	ended     bool
	err       error
	cancelled bool
	released  bool
	owed      int64 // tasks consumed and not yet requested again
}

// A queued task: the producer's task struct, copied into a pointer-free Go
// allocation that its extract_data gets during the call only, and the
// task's metadata.
type queued struct {
	task *abi.AsyncTask
	md   arrow.Metadata
}

// An imported task, or why it is not.
type imported struct {
	b   Batch
	err error
}

// outStruct is the ArrowDeviceArrays extract_data fills, one for each
// task imported together, made as needed and freed by Close or, for a
// handler dropped without Close, by a cleanup. mu keeps Close from freeing
// them while Next extracts into them.
type outStruct struct {
	mu    sync.Mutex
	p     []*abi.DeviceArray
	freed bool
}

// take returns n structs to extract into; o.mu is held.
func (o *outStruct) take(n int) []*abi.DeviceArray {
	for len(o.p) < n {
		o.p = append(o.p, cdevice.New[abi.DeviceArray]())
	}
	return o.p[:n]
}

func (o *outStruct) free() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.freed {
		o.freed = true
		for _, p := range o.p {
			cdevice.Free(p)
		}
	}
}

// A Batch is one task: its device record batch and the task's metadata.
// Handler.Next yields one extracted (the caller releases it); Produce takes
// them (and ownership of their batches) from its source.
type Batch struct {
	*cdevice.DeviceRecordBatch
	Metadata arrow.Metadata
}

var (
	onSchemaCB = ffi.NewCallback2("ArrowAsyncDeviceStreamHandler.on_schema", func(hp, s uintptr) uintptr {
		if h := handlerOf(hp); h != nil {
			return h.onSchema((*abi.Schema)(abi.Pointer(s)))
		}
		return uintptr(cdevice.EINVAL)
	})
	onNextTaskCB = ffi.NewCallback3("ArrowAsyncDeviceStreamHandler.on_next_task", func(hp, task, md uintptr) uintptr {
		if h := handlerOf(hp); h != nil {
			return h.onNextTask(task, md)
		}
		return uintptr(cdevice.EINVAL)
	})
	onErrorCB = ffi.NewCallback4("ArrowAsyncDeviceStreamHandler.on_error", func(hp, code, msg, md uintptr) uintptr {
		if h := handlerOf(hp); h != nil {
			h.onError(int(int32(code)), msg, md)
		}
		return 0
	})
	handlerReleaseCB = ffi.NewCallback1("ArrowAsyncDeviceStreamHandler.release", func(hp uintptr) uintptr {
		if h := handlerOf(hp); h != nil {
			h.release()
		}
		return 0
	})
)

func handlerOf(hp uintptr) *Handler {
	if hp == 0 {
		return nil
	}
	h, _ := ffi.Lookup[*Handler]((*abi.AsyncDeviceStreamHandler)(abi.Pointer(hp)).PrivateData)
	return h
}

// NewHandler returns a handler ready to hand to a producer (see C).
func NewHandler(opts ...Option) (*Handler, error) {
	h := &Handler{depth: 8, wake: make(chan struct{}, 1), schema: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(h)
		}
	}
	if h.callerC {
		// Checked before anything is allocated, so a refusal leaks nothing.
		// An unreleased struct may still belong to a producer.
		if h.c == nil || h.c.Release != 0 {
			return nil, fmt.Errorf("%w: NewHandler: WithHandlerStruct needs a non-nil, released struct", cdevice.ErrInvalid)
		}
	} else {
		h.c = cdevice.New[abi.AsyncDeviceStreamHandler]()
	}
	h.out = &outStruct{}
	*h.c = abi.AsyncDeviceStreamHandler{
		OnSchema:    onSchemaCB.Ptr(),
		OnNextTask:  onNextTaskCB.Ptr(),
		OnError:     onErrorCB.Ptr(),
		Release:     handlerReleaseCB.Ptr(),
		PrivateData: uintptr(ffi.NewHandle(h)),
	}
	h.leak = leak.Track(leak.AsyncHandler)
	runtime.AddCleanup(h, (*outStruct).free, h.out)
	return h, nil
}

// C is the struct to give the producer (WithHandlerStruct's out, if
// given). It stays valid until the producer calls its release.
func (h *Handler) C() *abi.AsyncDeviceStreamHandler { return h.c }

// Done is closed once the producer has released the handler.
func (h *Handler) Done() <-chan struct{} { return h.done }

// signal wakes a waiting Next.
func (h *Handler) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// schemaDone records the schema (or why there is none) once.
func (h *Handler) schemaDone(sc *arrow.Schema, err error) {
	select {
	case <-h.schema:
		return
	default:
	}
	h.sc, h.schemaErr = sc, err
	close(h.schema)
}

func (h *Handler) onSchema(s *abi.Schema) uintptr {
	sc, err := cdevice.ImportSchema(s) // takes ownership: released either way
	pp := h.c.Producer
	var md arrow.Metadata
	if err == nil && pp == 0 {
		err = fmt.Errorf("%w: on_schema before the producer populated handler->producer", cdevice.ErrInvalid)
	}
	if p := (*abi.AsyncProducer)(abi.Pointer(pp)); err == nil && (p.Request == 0 || p.Cancel == 0) {
		err = fmt.Errorf("%w: the producer's request or cancel is NULL", cdevice.ErrInvalid)
	}
	if err == nil {
		md, err = cmeta.Decode((*abi.AsyncProducer)(abi.Pointer(pp)).AdditionalMetadata)
	}
	if err != nil {
		pp = 0 // a producer refused is never called
	}
	h.calling.Lock()
	h.producer = pp
	h.calling.Unlock()
	h.mu.Lock()
	h.addMD = md
	h.schemaDone(sc, err)
	h.mu.Unlock()
	h.signal()
	if err != nil {
		return uintptr(cdevice.EINVAL) // the producer stops and releases us
	}
	h.request(h.depth) // allowed from on_schema: request never calls back
	return 0
}

// consumed notes a task taken from the queue and asks for more in chunks
// of half the queue depth: fewer calls into the producer (for a C producer,
// fewer thread wake-ups) while at most depth tasks are outstanding.
func (h *Handler) consumed() {
	h.mu.Lock()
	h.owed++
	n := h.owed
	if n < max(h.depth/2, 1) {
		h.mu.Unlock()
		return
	}
	h.owed = 0
	h.mu.Unlock()
	h.request(n)
}

// request asks the producer for n more tasks, unless the stream is over.
func (h *Handler) request(n int64) {
	h.callProducer(false, func(p *abi.AsyncProducer, pp uintptr) {
		ffi.Call(p.Request, ffi.AppendUint64([]uintptr{pp}, uint64(n))...)
	})
}

// callProducer runs f on the producer unless it was released or the
// stream is over: after the end (on_next_task(NULL)) or on_error, and for
// request after Cancel too. The spec keeps the producer valid until
// release, but arrow-go's (v18.8.0) tears itself down as soon as its
// stream ends, before it calls release: so once the stream is over
// nothing of the producer is called, and endOfStream waits for the calls
// already in flight.
func (h *Handler) callProducer(cancel bool, f func(p *abi.AsyncProducer, pp uintptr)) {
	h.calling.RLock()
	defer h.calling.RUnlock()
	h.mu.Lock()
	if h.producer == 0 || h.ended || (h.cancelled && !cancel) { // release zeroes producer
		h.mu.Unlock()
		return
	}
	h.inCalls++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.inCalls--; h.inCalls == 0 && h.idle != nil {
			close(h.idle)
			h.idle = nil
		}
		h.mu.Unlock()
	}()
	f((*abi.AsyncProducer)(abi.Pointer(h.producer)), h.producer)
}

// endWait bounds how long on_next_task(NULL) waits for calls into the
// producer in flight.
const endWait = 100 * time.Millisecond

// endOfStream is on_next_task(NULL). Before it returns, it waits for the
// request and cancel calls in flight (which passed callProducer's check
// before the end arrived) to return: arrow-go's producer closes the
// channel its request sends on, and frees itself, right after this
// returns. The wait is bounded, not the lock that release takes: a
// producer that holds a lock of its own around its callbacks and in
// request (legal) holds it now, so such a call cannot return until this
// one has; that costs it endWait, where waiting for good would deadlock.
// (on_error cannot wait at all: a producer may call it synchronously from
// within request or cancel.)
func (h *Handler) endOfStream() {
	h.mu.Lock()
	h.ended = true
	var idle chan struct{}
	if h.inCalls > 0 {
		if h.idle == nil {
			h.idle = make(chan struct{})
		}
		idle = h.idle
	}
	h.mu.Unlock()
	h.signal()
	if idle != nil {
		t := time.NewTimer(endWait)
		defer t.Stop()
		select {
		case <-idle:
		case <-t.C:
		}
	}
}

func (h *Handler) onNextTask(task, md uintptr) uintptr {
	if task == 0 { // the end of the stream
		h.endOfStream()
		return 0
	}
	if (*abi.AsyncTask)(abi.Pointer(task)).ExtractData == 0 {
		return uintptr(cdevice.EINVAL) // nothing to extract it with, or to give it back
	}
	meta, err := cmeta.Decode(md)
	h.mu.Lock()
	if err != nil || h.cancelled {
		h.mu.Unlock()
		// Not under mu: extract_data may call on_error.
		discard((*abi.AsyncTask)(abi.Pointer(task)))
		if err != nil {
			return uintptr(cdevice.EINVAL)
		}
		return 0
	}
	defer h.mu.Unlock()
	q := queued{task: new(abi.AsyncTask), md: meta}
	*q.task = *(*abi.AsyncTask)(abi.Pointer(task)) // valid only during this call
	h.queue = append(h.queue, q)
	h.signal()
	return 0
}

// discard gives a task back unread: extract_data, exactly once, into a
// scratch struct whose array it releases at once. Not a NULL out: the spec
// does not provide for one, and arrow-go's extract_data writes through it.
func discard(t *abi.AsyncTask) {
	if t.ExtractData == 0 {
		return
	}
	out := cdevice.New[abi.DeviceArray]()
	defer cdevice.Free(out)
	if ffi.Call(t.ExtractData, uintptr(unsafe.Pointer(t)), uintptr(unsafe.Pointer(out))) == 0 {
		cdevice.ReleaseDeviceArray(out)
	}
}

func (h *Handler) onError(code int, msg, md uintptr) {
	meta, _ := cmeta.Decode(md)
	e := &cdevice.ProducerError{Call: "on_error", Code: code, Message: ffi.GoString(msg), Metadata: meta}
	h.mu.Lock()
	h.err, h.ended = e, true
	h.schemaDone(nil, e)
	h.mu.Unlock()
	h.signal()
}

func (h *Handler) release() {
	h.calling.Lock() // waits for calls into the producer to return
	h.producer = 0   // the producer frees itself now
	h.calling.Unlock()
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return
	}
	h.released = true
	// The producer ended the stream without a schema: its error, as on_error would give it.
	h.schemaDone(nil, &cdevice.ProducerError{Call: "release", Code: int(cdevice.EIO), Message: "the producer released the handler before sending a schema"})
	ffi.Handle(h.c.PrivateData).Delete()
	if h.callerC {
		// The caller's to free; marked released so it reads as such (and
		// can be handed to NewHandler again).
		h.c.Release, h.c.PrivateData = 0, 0
	} else {
		cdevice.Free(h.c) // no producer touches it after release
	}
	h.leak.Done()
	h.mu.Unlock()
	close(h.done)
	h.signal()
}

// Queued is how many batches the producer has handed over that Next has
// not yet delivered: tasks waiting to be extracted, and batches a Next
// imported ahead of their turn.
func (h *Handler) Queued() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.queue) + len(h.ready)
}

// Schema waits for the producer's schema.
func (h *Handler) Schema(ctx context.Context) (*arrow.Schema, error) {
	select {
	case <-h.schema:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.sc, h.schemaErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// AdditionalMetadata is the producer's additional_metadata, copied at
// on_schema.
func (h *Handler) AdditionalMetadata() arrow.Metadata {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addMD
}

// Next extracts the next task (on the calling goroutine) and requests one
// more. It returns io.EOF at the end of the stream and a *cdevice.ProducerError
// after on_error. ctx bounds the wait for a task and for its batch's sync
// event. Every task queued when it is called is extracted and imported
// then, together (cdevice.ImportDeviceRecordBatchesOnDevice: one round
// trip for the sizes of all on a GPU); the later Nexts deliver them in
// order, each with its own error, if any.
func (h *Handler) Next(ctx context.Context) (Batch, error) {
	r, qs, sc, err := h.next(ctx, true)
	if err != nil || r != nil {
		return deliver(r, err)
	}
	rs := make([]imported, len(qs))
	h.extract(qs, func(outs []*abi.DeviceArray, errs []error) {
		var arrs []*abi.DeviceArray
		var at []int
		for i, o := range outs {
			rs[i].b.Metadata, rs[i].err = qs[i].md, errs[i]
			if errs[i] == nil {
				arrs, at = append(arrs, o), append(at, i)
			}
		}
		if len(arrs) == 0 {
			return
		}
		bs, errs := cdevice.ImportDeviceRecordBatchesOnDevice(ctx, arrs, sc)
		for k, i := range at {
			rs[i].b.DeviceRecordBatch, rs[i].err = bs[k], errs[k]
		}
	})
	h.mu.Lock()
	if h.cancelled { // Cancel has given back what it could: these go too
		h.mu.Unlock()
		releaseAll(rs[1:])
	} else {
		h.ready = append(h.ready, rs[1:]...)
		h.mu.Unlock()
	}
	return deliver(&rs[0], nil)
}

// deliver returns r's batch (or its error) to the caller of Next.
func deliver(r *imported, err error) (Batch, error) {
	if err != nil {
		return Batch{}, err
	}
	if r.err != nil {
		return Batch{}, r.err
	}
	return r.b, nil
}

func releaseAll(rs []imported) {
	for _, r := range rs {
		if r.b.DeviceRecordBatch != nil {
			r.b.Release()
		}
	}
}

// NextHost is Next with the batch in host memory, as
// cdevice.ImportDeviceRecordBatch brings it there: memory the host can read
// (the CPU's, CUDA host and managed memory, …) is wrapped without a copy,
// other memory is copied. The caller releases the batch. It takes one
// task at a time (a batch a Next imported already is copied with ToHost).
func (h *Handler) NextHost(ctx context.Context) (arrow.RecordBatch, arrow.Metadata, error) {
	r, qs, sc, err := h.next(ctx, false)
	if err != nil {
		return nil, arrow.Metadata{}, err
	}
	if r != nil {
		if r.err != nil {
			return nil, arrow.Metadata{}, r.err
		}
		defer r.b.Release()
		rb, err := r.b.ToHost(ctx)
		return rb, r.b.Metadata, err
	}
	var rb arrow.RecordBatch
	h.extract(qs, func(outs []*abi.DeviceArray, errs []error) {
		if err = errs[0]; err == nil {
			rb, err = cdevice.ImportDeviceRecordBatchWithSchema(ctx, outs[0], sc)
		}
	})
	if err != nil {
		return nil, arrow.Metadata{}, err
	}
	return rb, qs[0].md, nil
}

// next waits for the next batch: one a Next imported already, or the
// queued tasks (all of them, or the first), taken off the queue and
// counted as consumed. It returns io.EOF at the end of the stream.
func (h *Handler) next(ctx context.Context, all bool) (*imported, []queued, *arrow.Schema, error) {
	sc, err := h.Schema(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	for {
		h.mu.Lock()
		if len(h.ready) > 0 {
			r := h.ready[0]
			h.ready = h.ready[1:]
			h.mu.Unlock()
			h.consumed()
			return &r, nil, sc, nil
		}
		if n := len(h.queue); n > 0 {
			if !all {
				n = 1
			}
			qs := h.queue[:n:n]
			h.queue = h.queue[n:]
			h.mu.Unlock()
			h.consumed()
			return nil, qs, sc, nil
		}
		err, end := h.err, h.ended || h.released
		h.mu.Unlock()
		if err != nil {
			return nil, nil, nil, err
		}
		if end {
			return nil, nil, nil, io.EOF
		}
		select {
		case <-h.wake:
		case <-ctx.Done():
			return nil, nil, nil, ctx.Err()
		}
	}
}

// extract takes each task's batch, in order, into a struct of the
// handler's, and hands them to imp, which takes every one without an
// error out of its struct (errs[i]: why task i has none).
func (h *Handler) extract(qs []queued, imp func(outs []*abi.DeviceArray, errs []error)) {
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	errs := make([]error, len(qs))
	if o.freed { // closed meanwhile: give the tasks back
		for i, q := range qs {
			discard(q.task)
			errs[i] = io.EOF
		}
		imp(make([]*abi.DeviceArray, len(qs)), errs)
		return
	}
	outs := o.take(len(qs))
	for i, q := range qs {
		if rc := int32(ffi.Call(q.task.ExtractData, uintptr(unsafe.Pointer(q.task)), uintptr(unsafe.Pointer(outs[i])))); rc != 0 {
			errs[i] = &cdevice.ProducerError{Call: "extract_data", Code: int(rc)}
		}
	}
	imp(outs, errs)
}

// All yields every remaining batch; each is released after the loop body
// unless retained. A final (Batch{}, err) reports an error.
func (h *Handler) All(ctx context.Context) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		for {
			b, err := h.Next(ctx)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Batch{}, err)
				return
			}
			more := yield(b, nil)
			b.Release()
			if !more {
				return
			}
		}
	}
}

// Cancel asks the producer to stop (once; later calls do nothing, and
// after the end of the stream or an error there is nothing to stop) and
// gives back the tasks queued so far; tasks still arriving are given back
// too.
func (h *Handler) Cancel() {
	// calling too: a request in flight returns before the producer hears
	// of the cancel (arrow-go's stops reading requests then), and none
	// starts after it.
	h.calling.Lock()
	h.mu.Lock()
	if h.cancelled || h.released {
		h.mu.Unlock()
		h.calling.Unlock()
		return
	}
	h.cancelled = true // from now on arriving tasks are given back at once
	queue, ready := h.queue, h.ready
	h.queue, h.ready = nil, nil
	h.mu.Unlock()
	h.calling.Unlock()
	for _, q := range queue {
		discard(q.task)
	}
	releaseAll(ready)
	// Not under mu: cancel may call on_error synchronously.
	h.callProducer(true, func(p *abi.AsyncProducer, pp uintptr) { ffi.Call(p.Cancel, pp) })
	h.signal()
}

// Close cancels the stream and waits until the producer releases the
// handler (or ctx is done). Queued tasks are given back unread.
func (h *Handler) Close(ctx context.Context) error {
	h.Cancel()
	select {
	case <-h.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	// Arrived before Cancel took the lock, or left after the stream ended
	// (Cancel does nothing then).
	queue, ready := h.queue, h.ready
	h.queue, h.ready = nil, nil
	h.mu.Unlock()
	for _, q := range queue {
		discard(q.task)
	}
	releaseAll(ready)
	h.out.free()
	return nil
}
