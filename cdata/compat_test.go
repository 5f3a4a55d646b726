package cdata_test

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cdata"
	"github.com/purearrow/cdevice/internal/testsupport"
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
