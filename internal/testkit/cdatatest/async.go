package cdatatest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// errProducer is what the async producer's stream fails with.
var errProducer = errors.New("cdatatest: the producer's stream failed")

const asyncTimeout = 30 * time.Second

// recv receives from ch, failing t after asyncTimeout.
func recv[T any](t *testing.T, what string, ch <-chan T) (T, bool) {
	t.Helper()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-time.After(asyncTimeout):
		t.Fatalf("%s: nothing after %v", what, asyncTimeout)
		panic("unreachable")
	}
}

// messages is a closed channel of a message for each of recs (retained for
// the consumer to release) and then, unless it is nil, one of err.
func messages(recs []arrow.RecordBatch, err error) <-chan RecordMessage {
	ch := make(chan RecordMessage, len(recs)+1)
	for _, r := range recs {
		r.Retain()
		ch <- RecordMessage{Record: r}
	}
	if err != nil {
		ch <- RecordMessage{Err: err}
	}
	close(ch)
	return ch
}

// asyncPair starts a consumer (CreateAsyncDeviceStreamHandler on a handler
// in C memory) and a producer (ExportAsyncRecordBatchStream of schema and
// msgs into that handler), and returns what the consumer sees and the
// producer's result. For a schema, it wants the consumer's stream to have
// it and no error.
func (s *suite) asyncPair(t *testing.T, schema *arrow.Schema, msgs <-chan RecordMessage) (AsyncRecordBatchStream, <-chan error) {
	t.Helper()
	handler := testsupport.OffHeap[abi.AsyncDeviceStreamHandler](t)
	ch := s.api.CreateAsyncDeviceStreamHandler(context.Background(), 1, addr(handler))
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		done <- s.api.ExportAsyncRecordBatchStream(schema, msgs, addr(handler))
	}()
	st, ok := recv(t, "CreateAsyncDeviceStreamHandler's channel", ch)
	if !ok {
		t.Fatalf("CreateAsyncDeviceStreamHandler's channel closed without a stream")
	}
	t.Cleanup(func() {
		// Wait for the producer before the handler is freed.
		select {
		case <-finished:
		case <-time.After(asyncTimeout):
			t.Errorf("the producer did not return")
		}
	})
	if schema != nil {
		noError(t, "the consumer's stream", st.Err)
		if !schema.Equal(st.Schema) {
			t.Errorf("schema %s, want %s", st.Schema, schema)
		}
	}
	return st, done
}

var asyncScenarios = []scenario{
	{"AsyncInterfacesSimple", func(t *testing.T, s *suite) {
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		st, done := s.asyncPair(t, recs[0].Schema(), messages(recs, nil))
		n := 0
		for {
			m, ok := recv(t, "the record stream", st.Stream)
			if !ok {
				break
			}
			noError(t, "a record message", m.Err)
			if n >= len(recs) || !array.RecordEqual(recs[n], m.Record) {
				t.Errorf("batch %d: got %v", n, m.Record)
			}
			m.Record.Release()
			n++
		}
		if n != len(recs) {
			t.Errorf("%d batches, want %d", n, len(recs))
		}
		err, _ := recv(t, "the producer", done)
		noError(t, "ExportAsyncRecordBatchStream", err)
	}},
	{"AsyncSchemaError", func(t *testing.T, s *suite) {
		st, done := s.asyncPair(t, nil, nil)
		if st.Err == nil {
			t.Fatalf("the consumer's stream has no error")
		}
		if code, ok := s.api.AsyncStreamErrorCode(st.Err); !ok || code != 22 {
			t.Errorf("the consumer's error %q: AsyncStreamError %v with code %d, want code 22 (EINVAL)", st.Err, ok, code)
		}
		err, _ := recv(t, "the producer", done)
		wantError(t, "ExportAsyncRecordBatchStream(nil schema)", err, arrow.ErrInvalid)
		wantErrorContaining(t, "ExportAsyncRecordBatchStream(nil schema)", err, "must have non-nil schema")
	}},
	{"AsyncPropagateError", func(t *testing.T, s *suite) {
		recs := primitiveBatches(t)
		defer releaseAll(recs)
		st, done := s.asyncPair(t, recs[0].Schema(), messages(recs[:1], errProducer))
		m, ok := recv(t, "the record stream", st.Stream)
		if !ok {
			t.Fatalf("the record stream closed before the first batch")
		}
		noError(t, "the first record message", m.Err)
		if !array.RecordEqual(recs[0], m.Record) {
			t.Errorf("batch 0: got %v", m.Record)
		}
		m.Record.Release()
		m, ok = recv(t, "the record stream", st.Stream)
		if !ok {
			t.Fatalf("the record stream closed without the producer's error")
		}
		wantErrorContaining(t, "the second record message", m.Err, errProducer.Error())
		if code, ok := s.api.AsyncStreamErrorCode(m.Err); !ok || code != 22 {
			t.Errorf("the second message's error %q: AsyncStreamError %v with code %d, want code 22 (EINVAL)", m.Err, ok, code)
		}
		if m.Record != nil {
			m.Record.Release()
		}
		err, _ := recv(t, "the producer", done)
		wantError(t, "ExportAsyncRecordBatchStream", err, errProducer)
	}},
}
