package importtest

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/stream"
)

// readCounter is a device.ValueReader device that counts its ReadValues
// calls (each one wait for the device), registered under an id of its
// own, so that the test's imports find it and no other test's device is
// displaced.
type readCounter struct {
	reader
	id    int64
	calls atomic.Int64
}

type reader interface {
	device.Device
	device.ValueReader
}

func (r *readCounter) ID() int64 { return r.id }

func (r *readCounter) ReadValues(ctx context.Context, evs []uintptr, reads []device.ValueRead) error {
	r.calls.Add(1)
	return r.reader.ReadValues(ctx, evs, reads)
}

var nextID atomic.Int64

// Imports and queued are how many batches DeviceImports imports from a
// device stream, and how many queue for one async Next.
const imports, queued = 100, 8

// DeviceImports copies the wide and the nested sample batches to d and
// imports each imports times from a device stream as a C producer's
// structs are read, then queued times through an async handler whose
// tasks all queue before the first Next: each stream import must wait for
// the device once (none where the host reads d's memory in place), the
// async Next once for all, and every batch must come back equal.
func DeviceImports(t *testing.T, d device.Device) {
	defer identity.Set(identity.Set(false))
	r, ok := d.(reader)
	if !ok {
		t.Fatalf("%s is no device.ValueReader", d.Name())
	}
	rc := &readCounter{reader: r, id: 1000 + nextID.Add(1)}
	device.Register(rc)
	waits := int64(1)
	if d.HostAccessible() {
		waits = 0
	}
	for _, batch := range sample.DeviceShapes {
		t.Run(batch.Name, func(t *testing.T) {
			rec := batch.Make()
			defer rec.Release()
			streamImports(t, rc, rec, waits)
			asyncImports(t, rc, rec, waits)
		})
	}
}

func streamImports(t *testing.T, rc *readCounter, rec arrow.RecordBatch, waits int64) {
	ctx := context.Background()
	db := copyTo(t, rec, rc)
	defer db.Release()
	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	must(t, stream.ExportDeviceStream(rec.Schema(), rc.Type(), Repeat(db, imports), s))
	r, err := stream.ImportDeviceStream(s)
	must(t, err)
	defer r.Release()
	for i := range imports {
		before := rc.calls.Load()
		got, err := r.Next(ctx)
		must(t, err)
		if n := rc.calls.Load() - before; n != waits {
			t.Fatalf("stream import %d waited for the device %d times, want %d", i, n, waits)
		}
		same(t, got, rec)
	}
}

func asyncImports(t *testing.T, rc *readCounter, rec arrow.RecordBatch, waits int64) {
	ctx := context.Background()
	db := copyTo(t, rec, rc)
	defer db.Release()
	h, err := async.NewHandler(async.WithQueueDepth(queued))
	must(t, err)
	defer h.Close(ctx)
	produced := make(chan error, 1)
	go func() {
		produced <- async.Produce(ctx, rec.Schema(), rc.Type(), async.Batches(Repeat(db, queued)), h.C())
	}()
	if !settle.Eventually(func() bool { return h.Queued() == queued }) {
		t.Fatalf("%d tasks queued, want %d", h.Queued(), queued)
	}
	before := rc.calls.Load()
	for range queued {
		b, err := h.Next(ctx)
		must(t, err)
		same(t, b.DeviceRecordBatch, rec)
	}
	if n := rc.calls.Load() - before; n != waits {
		t.Errorf("%d queued batches imported with %d waits for the device, want %d", queued, n, waits)
	}
	must(t, h.Close(ctx))
	must(t, <-produced)
}

func copyTo(t *testing.T, rec arrow.RecordBatch, d device.Device) *cdevice.DeviceRecordBatch {
	db, err := cdevice.CopyRecordBatchToDevice(context.Background(), rec, d)
	must(t, err)
	return db
}

// same brings got to the host, releasing it, and compares it with want.
func same(t *testing.T, got *cdevice.DeviceRecordBatch, want arrow.RecordBatch) {
	t.Helper()
	err := SameBatch(context.Background(), got, want)
	got.Release()
	must(t, err)
}

// SameBatch brings got to the host and compares it with want.
func SameBatch(ctx context.Context, got *cdevice.DeviceRecordBatch, want arrow.RecordBatch) error {
	host, err := got.ToHost(ctx)
	if err != nil {
		return err
	}
	defer host.Release()
	if !array.RecordEqual(want, host) {
		return errors.New("values differ after the import")
	}
	return nil
}

// Repeat yields db n times, a reference each (an exporter takes ownership
// of what it is given).
func Repeat(db *cdevice.DeviceRecordBatch, n int) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for range n {
			db.Retain()
			if !yield(db, nil) {
				return
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
