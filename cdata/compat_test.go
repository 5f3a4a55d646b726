package cdata_test

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cdata"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Where arrow-go's cdata dereferences nil or panics, ours returns an error
// matching both packages' sentinels (or leaves the output released).
func TestNilAndUnexportable(t *testing.T) {
	both := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, arrow.ErrInvalid) || !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("error %v: want arrow.ErrInvalid and cdevice.ErrInvalid", err)
		}
	}
	testsupport.NoPanic(t, "nil structs", func() {
		_, err := cdata.ImportCArrowField(nil)
		both(t, err)
		_, err = cdata.ImportCArrowSchema(nil)
		both(t, err)
		_, err = cdata.ImportCArrayWithType(nil, arrow.PrimitiveTypes.Int8)
		both(t, err)
		_, _, err = cdata.ImportCArray(nil, nil)
		both(t, err)
		_, err = cdata.ImportCRecordBatch(nil, nil)
		both(t, err)
		_, err = cdata.ImportCRecordBatchWithSchema(nil, arrow.NewSchema(nil, nil))
		both(t, err)
		_, err = cdata.ImportCRecordReader(nil, nil)
		both(t, err)
		r := cdata.ImportCArrayStream(nil, nil)
		if _, err := r.Read(); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("Read of a failed import: %v, want the import's error", err)
		}
		cdata.ReleaseCArrowSchema(nil)
		cdata.ReleaseCArrowArray(nil)
		cdata.ReleaseCArrowArrayStream(nil)
	})
	// Exports of nothing leave a struct that held garbage reading released.
	testsupport.NoPanic(t, "exports", func() {
		garbage := cdata.CArrowArray{Release: 1, PrivateData: 2}
		cdata.ExportArrowArray(nil, &garbage, nil)
		if !garbage.Released() || garbage.PrivateData != 0 {
			t.Errorf("failed ExportArrowArray left %+v", garbage)
		}
		sc := cdata.CArrowSchema{Release: 1}
		cdata.ExportArrowSchema(nil, &sc)
		if !sc.Released() {
			t.Error("failed ExportArrowSchema left the schema unreleased")
		}
		st := cdata.CArrowArrayStream{Release: 1}
		cdata.ExportRecordReader(nil, &st)
		if !st.Released() {
			t.Error("failed ExportRecordReader left the stream unreleased")
		}
		cdata.ExportArrowRecordBatch(nil, nil, nil)
	})
}

// What arrow-go's cdata does that its programs may rely on: the schema
// ExportArrowArray writes is a field with no name and no flags (imported
// back: not nullable); after Read's io.EOF, Err says io.EOF too; and where
// arrow-go panics (a nil type), ours returns an error and releases the
// array, and a reader used after its Release reads no more of its stream.
func TestArrowGoBehaviours(t *testing.T) {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{1, 2, 3}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	t.Run("ExportArrowArray_schema", func(t *testing.T) {
		var ca cdata.CArrowArray
		var cs cdata.CArrowSchema
		cdata.ExportArrowArray(arr, &ca, &cs)
		if cs.Flags != 0 {
			t.Errorf("flags %d, want 0 (arrow-go exports arrow.Field{Type: arr.DataType()})", cs.Flags)
		}
		f, got, err := cdata.ImportCArray(&ca, &cs)
		if err != nil {
			t.Fatal(err)
		}
		got.Release()
		if f.Nullable || f.Name != "" {
			t.Errorf("imported field %v, want no name, not nullable", f)
		}
	})
	t.Run("ImportCArrayWithType_nil_type", func(t *testing.T) {
		var ca cdata.CArrowArray
		cdata.ExportArrowArray(arr, &ca, nil)
		_, err := cdata.ImportCArrayWithType(&ca, nil)
		if !errors.Is(err, arrow.ErrInvalid) || !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ImportCArrayWithType(a, nil): %v, want ErrInvalid", err)
		}
		if !ca.Released() {
			t.Error("the array was not released")
			cdata.ReleaseCArrowArray(&ca)
		}
	})
	t.Run("stream_EOF_and_release", func(t *testing.T) {
		rb := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arr.DataType()}}, nil), []arrow.Array{arr}, int64(arr.Len()))
		rr, err := array.NewRecordReader(rb.Schema(), []arrow.RecordBatch{rb})
		rb.Release()
		if err != nil {
			t.Fatal(err)
		}
		var cst cdata.CArrowArrayStream
		cdata.ExportRecordReader(rr, &cst)
		r, err := cdata.ImportCRecordReader(&cst, nil)
		if err != nil {
			t.Fatal(err)
		}
		rd := r.(array.RecordReader)
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(); err != io.EOF {
			t.Errorf("Read at the end: %v, want io.EOF", err)
		}
		if err := rd.Err(); err != io.EOF {
			t.Errorf("Err after Read's io.EOF: %v, want io.EOF (as arrow-go's)", err)
		}
		rd.Release()
		if _, err := r.Read(); err == nil || err == io.EOF {
			t.Errorf("Read after Release: %v, want an error", err)
		}
	})
}

// A producer's on_error reaches the async consumer as arrow-go's
// AsyncStreamError, which also matches cdevice.ErrProducer and its errno.
func TestAsyncStreamErrorMatches(t *testing.T) {
	e := cdata.AsyncStreamError{Code: int(cdevice.EIO), Msg: "boom"}
	if !errors.Is(e, cdevice.ErrProducer) || !errors.Is(e, syscall.EIO) || e.Error() != "boom" {
		t.Errorf("AsyncStreamError %v does not match ErrProducer and EIO", e)
	}

	handler := cdevice.New[cdata.CArrowAsyncDeviceStreamHandler]()
	defer cdevice.Free(handler)
	streams := cdata.CreateAsyncDeviceStreamHandler(context.Background(), 0, handler)
	msgs := make(chan cdata.RecordMessage, 1)
	msgs <- cdata.RecordMessage{Err: errors.New("source failed")}
	close(msgs)
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	done := make(chan error, 1)
	go func() { done <- cdata.ExportAsyncRecordBatchStream(sc, msgs, handler) }()
	s := <-streams
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	var got error
	for msg := range s.Stream {
		got = msg.Err
	}
	var ase cdata.AsyncStreamError
	if !errors.As(got, &ase) || ase.Msg != "source failed" || !errors.Is(got, cdevice.ErrProducer) {
		t.Errorf("consumer got %v (%T), want the producer's AsyncStreamError", got, got)
	}
	if err := <-done; err == nil || err.Error() != "source failed" {
		t.Errorf("producer returned %v, want the source's error", err)
	}
}
