package leak

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// A Kind is one kind of live object.
type Kind int

const (
	ExportedSchema Kind = iota // an ArrowSchema tree we exported, not yet released by its consumer
	ExportedArray              // an ArrowArray or ArrowDeviceArray tree we exported
	ExportedStream             // an ArrowArrayStream or ArrowDeviceArrayStream we exported
	AsyncProducer              // an ArrowAsyncProducer we made for a C handler
	AsyncHandler               // an ArrowAsyncDeviceStreamHandler we made for a C producer
	ImportedArray              // an ArrowArray tree whose producer's release has not run
	ImportedStream             // an imported stream whose producer's release has not run
	ExportedTensor             // a DLManagedTensor we exported, its deleter not yet called
	ImportedTensor             // an imported DLManagedTensor, its deleter not yet called
	DeviceArray                // a DeviceArray or DeviceRecordBatch tree not yet released
	DeviceAlloc                // a device memory block held by device arrays
	NumKinds
)

var kindNames = [NumKinds]string{
	"exported schemas", "exported arrays", "exported streams", "async producers", "async handlers",
	"imported arrays", "imported streams", "DLPack exports", "DLPack imports", "device arrays",
	"device allocations",
}

func (k Kind) String() string { return kindNames[k] }

var counts [NumKinds]atomic.Int64

// Histories of a consumer's bugs made harmless, not live counts: calls of
// the release of an ArrowSchema or ArrowArray we exported on a struct
// already released, and calls of the deleter of our DLPack exports on a
// struct whose deleter already ran (or that is not ours).
var DoubleReleases, StrayDLPackDeletes atomic.Int64

// Count returns the number of live objects of kind k.
func Count(k Kind) int64 { return counts[k].Load() }

// Add counts n objects of kind k made (or, negative, given back) without
// their sites: parts of an object whose own site Track records, such as the
// device blocks of a device array.
func Add(k Kind, n int64) { counts[k].Add(n) }

// An Object is one live object as Track counted it. Its Done must run
// exactly once, when the object is given back.
type Object struct {
	kind Kind
	id   uint64 // 0: made while tracing was off
}

var tracer struct {
	on    atomic.Bool
	mu    sync.Mutex
	next  uint64
	sites map[uint64]site
}

type site struct {
	kind Kind
	pcs  []uintptr
}

// Track counts a new object of kind k and, while tracing, records its
// caller's stack.
func Track(k Kind) Object {
	counts[k].Add(1)
	if !tracer.on.Load() {
		return Object{kind: k}
	}
	pcs := make([]uintptr, 32)
	pcs = pcs[:runtime.Callers(2, pcs)]
	tracer.mu.Lock()
	defer tracer.mu.Unlock()
	tracer.next++
	if tracer.sites == nil {
		tracer.sites = make(map[uint64]site)
	}
	tracer.sites[tracer.next] = site{kind: k, pcs: pcs}
	return Object{kind: k, id: tracer.next}
}

// Done counts the object as given back.
func (o Object) Done() {
	counts[o.kind].Add(-1)
	if o.id != 0 {
		tracer.mu.Lock()
		delete(tracer.sites, o.id)
		tracer.mu.Unlock()
	}
}

// SetTracing turns recording of creation sites on or off. Objects made
// while it is off are counted but have no site.
func SetTracing(on bool) { tracer.on.Store(on) }

// Tracing reports whether creation sites are recorded.
func Tracing() bool { return tracer.on.Load() }

// Sites describes each live object made while tracing was on, oldest
// first: its kind and the stack that made it (frames of this module's
// callers and the runtime's internals left out where they say nothing).
func Sites() []string {
	tracer.mu.Lock()
	ids := make([]uint64, 0, len(tracer.sites))
	for id := range tracer.sites {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	sites := make([]site, len(ids))
	for i, id := range ids {
		sites[i] = tracer.sites[id]
	}
	tracer.mu.Unlock()
	out := make([]string, len(sites))
	for i, s := range sites {
		var b strings.Builder
		fmt.Fprintf(&b, "%s, made at:", strings.TrimSuffix(s.kind.String(), "s"))
		frames := runtime.CallersFrames(s.pcs)
		for {
			f, more := frames.Next()
			if !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "testing.") {
				fmt.Fprintf(&b, "\n\t%s\n\t\t%s:%d", f.Function, f.File, f.Line)
			}
			if !more {
				break
			}
		}
		out[i] = b.String()
	}
	return out
}
