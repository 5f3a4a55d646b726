package async

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
)

var (
	// ErrConsumer: a handler callback returned non-zero, so the producer
	// stopped; the error is a *ConsumerError.
	ErrConsumer = errors.New("async: consumer refused")
)

// A ConsumerError is a handler callback's non-zero return.
type ConsumerError struct {
	Callback string // "on_schema", "on_next_task", or "request" (n <= 0)
	Code     int
}

func (e *ConsumerError) Error() string {
	if e.Callback == "request" {
		return "async: the handler called request with n <= 0"
	}
	return fmt.Sprintf("async: the handler's %s returned %d", e.Callback, e.Code)
}

// Unwrap makes the error match ErrConsumer and its code as a cdevice.Errno.
func (e *ConsumerError) Unwrap() []error { return []error{ErrConsumer, cdevice.Errno(e.Code)} }

// An Option configures a Handler.
type Option struct{ apply func(*Handler) }

// WithQueueDepth makes the handler request n tasks up front and one more for
// each task consumed, so at most n are outstanding (default 8).
func WithQueueDepth(n int) Option {
	return Option{func(h *Handler) {
		if n > 0 {
			h.depth = int64(n)
		}
	}}
}

// WithHandlerStruct makes the handler live in the caller's struct out
// instead of one NewHandler allocates, for APIs that hand a consumer a
// struct to fill (arrow-go's cdata does). out must be C memory
// (cdevice.New) or Go memory the caller keeps reachable and pinned until
// the producer releases it, and released (Release == 0): NewHandler
// overwrites it and returns an error wrapping cdevice.ErrInvalid for a nil
// or unreleased out. C returns out. At release the handler marks out
// released (Release and PrivateData 0) and leaves it to the caller to free.
func WithHandlerStruct(out *abi.AsyncDeviceStreamHandler) Option {
	return Option{func(h *Handler) {
		h.c, h.callerC = out, true
	}}
}

// A ProduceOption configures Produce.
type ProduceOption struct{ apply func(*producer) }

// WithAdditionalMetadata sets the producer's additional_metadata (for
// example the total number of rows or batches).
func WithAdditionalMetadata(md arrow.Metadata) ProduceOption {
	return ProduceOption{func(p *producer) { p.md = md }}
}
