package cdata

import (
	"context"
	"errors"
	"io"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/internal/cmeta"
)

// RecordMessage is one batch of an async stream, or the error that ends it,
// with the batch's task metadata.
type RecordMessage struct {
	Record             arrow.RecordBatch
	AdditionalMetadata arrow.Metadata
	Err                error
}

// AsyncRecordBatchStream is what CreateAsyncDeviceStreamHandler's channel
// delivers once: the producer's schema and additional_metadata and the
// channel of its batches, or (Err) why there is no stream.
type AsyncRecordBatchStream struct {
	Schema             *arrow.Schema
	AdditionalMetadata arrow.Metadata
	Err                error
	Stream             <-chan RecordMessage
}

// AsyncStreamError is a producer's on_error: its errno-style code, message
// and metadata (in the C metadata encoding). It matches cdevice.ErrProducer
// and cdevice.Errno(Code) with errors.Is, so the natural Go error of its
// code too (syscall.EIO for EIO, on every platform).
type AsyncStreamError struct {
	Code     int
	Msg      string
	Metadata string
}

func (e AsyncStreamError) Error() string { return e.Msg }

// Unwrap makes the error match cdevice.ErrProducer and its errno.
func (e AsyncStreamError) Unwrap() []error {
	return []error{cdevice.ErrProducer, cdevice.Errno(e.Code)}
}

// streamError is err as arrow-go reports it: a producer's on_error as an
// AsyncStreamError, anything else with arrow-go's sentinels added.
func streamError(err error) error {
	var pe *cdevice.ProducerError
	if errors.As(err, &pe) && pe.Call == "on_error" {
		var md string
		if pe.Metadata.Len() > 0 {
			md = string(cmeta.Encode(pe.Metadata))
		}
		return AsyncStreamError{Code: pe.Code, Msg: pe.Message, Metadata: md}
	}
	return compat(err)
}

// maxQueue bounds the handler's queue: queueSize comes from the caller, and
// the queue's channel is allocated up front.
const maxQueue = 1 << 16

// CreateAsyncDeviceStreamHandler fills out as an ArrowAsyncDeviceStreamHandler
// (async.NewHandler with async.WithHandlerStruct) and returns a channel that
// delivers one AsyncRecordBatchStream once the producer has called on_schema
// (or Err, when it failed first), then closes. The handler requests queueSize
// tasks up front (at least 1, at most 65536) and one more per batch consumed;
// each batch arrives on the Stream channel as a host record batch the
// receiver releases, and the channel closes at the end of the stream, after
// an error (a RecordMessage with Err), or when ctx is done, which also
// cancels the producer.
//
// out must stay valid until the producer releases it: C memory
// (cdevice.New), or Go memory kept reachable and pinned for that long.
// Batches the host can read are wrapped without a copy, as arrow-go's are;
// unlike arrow-go's, which refuses every device but the CPU, batches on a
// device a loaded backend owns are copied to the host (async.Handler's
// NextHost).
func CreateAsyncDeviceStreamHandler(ctx context.Context, queueSize uint64, out *CArrowAsyncDeviceStreamHandler) <-chan AsyncRecordBatchStream {
	depth := int(min(max(queueSize, 1), maxQueue))
	ch := make(chan AsyncRecordBatchStream, 1) // the one send never blocks
	h, err := async.NewHandler(async.WithQueueDepth(depth), async.WithHandlerStruct(out))
	if err != nil {
		ch <- AsyncRecordBatchStream{Err: compat(err)}
		close(ch)
		return ch
	}
	go consume(ctx, h, depth, ch)
	return ch
}

// consume delivers h's stream on ch as arrow-go's handler does.
func consume(ctx context.Context, h *async.Handler, depth int, ch chan<- AsyncRecordBatchStream) {
	defer close(ch)
	sc, err := h.Schema(ctx)
	if err != nil {
		h.Cancel()
		ch <- AsyncRecordBatchStream{Err: streamError(err)}
		return
	}
	records := make(chan RecordMessage, depth)
	defer close(records)
	ch <- AsyncRecordBatchStream{Schema: sc, AdditionalMetadata: h.AdditionalMetadata(), Stream: records}
	for {
		rec, md, err := h.NextHost(ctx)
		if err == io.EOF {
			return
		}
		msg := RecordMessage{Record: rec, AdditionalMetadata: md}
		if err != nil {
			h.Cancel()
			msg = RecordMessage{Err: streamError(err)}
		}
		select {
		case records <- msg:
		case <-ctx.Done():
			if msg.Record != nil {
				msg.Record.Release()
			}
			h.Cancel()
			return
		}
		if msg.Err != nil {
			return
		}
	}
}

// ExportAsyncRecordBatchStream drives the handler from stream, batches of
// schema on the CPU, until stream closes or delivers an error
// (async.Produce). It takes each message's record (released once the
// consumer has extracted or dropped it) and sends the message's
// AdditionalMetadata as its task's metadata; it waits for requests without
// spinning. It returns nil at the end of the stream or when the consumer
// cancels, the stream's error (reported through on_error first; a nil
// schema is one, wrapping arrow.ErrInvalid), or an error when a handler
// callback fails. The handler is released before it returns.
func ExportAsyncRecordBatchStream(schema *arrow.Schema, stream <-chan RecordMessage, handler *CArrowAsyncDeviceStreamHandler) error {
	return compat(async.Produce(context.Background(), schema, abi.DeviceCPU, messages(stream), handler))
}

// sourceError is a message's error, which on_error reports as EINVAL, as
// arrow-go's producer does.
type sourceError struct{ error }

func (e sourceError) Unwrap() []error { return []error{e.error, cdevice.EINVAL} }

// messages yields stream's records as CPU device batches, without copying.
func messages(stream <-chan RecordMessage) iter.Seq2[async.Batch, error] {
	return func(yield func(async.Batch, error) bool) {
		for msg := range stream {
			if msg.Err != nil {
				yield(async.Batch{}, sourceError{msg.Err})
				return
			}
			b, err := cdevice.CPURecordBatch(msg.Record) // shares, as arrow-go's export does
			if msg.Record != nil {
				msg.Record.Release()
			}
			if !yield(async.Batch{DeviceRecordBatch: b, Metadata: msg.AdditionalMetadata}, err) {
				return
			}
		}
	}
}
