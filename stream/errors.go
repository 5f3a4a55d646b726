package stream

import (
	"errors"
	"fmt"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/internal/errno"
)

var (
	// ErrProducer: a C producer's get_schema or get_next failed; the error
	// is a *ProducerError.
	ErrProducer = errors.New("stream: producer failed")
	// ErrEmptyBatches: the producer sent more consecutive empty batches than
	// WithMaxEmptyBatches allows. It wraps cdevice.ErrInvalid.
	ErrEmptyBatches = fmt.Errorf("%w: stream: too many consecutive empty batches", cdevice.ErrInvalid)
	// ErrReleased: the stream struct was already released.
	ErrReleased = cdevice.ErrReleased
)

// A ProducerError is a failed get_schema or get_next of a C producer: its
// errno-style code and the message get_last_error gave (empty if none).
// When the producer is a stream this package exported in this process,
// read directly without going through C (as it always is), the error also
// wraps the producer's own error.
type ProducerError struct {
	Call    string // "get_schema" or "get_next"
	Code    int
	Message string
}

func (e *ProducerError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("stream: %s failed with code %d", e.Call, e.Code)
	}
	return fmt.Sprintf("stream: %s failed with code %d: %s", e.Call, e.Code, e.Message)
}

func (e *ProducerError) Unwrap() error { return ErrProducer }

// producerFailure is the error of a get_next of our own exported stream read
// directly (identity imports): the *ProducerError a C consumer would see,
// with the producer's own error still in the chain.
type producerFailure struct {
	*ProducerError
	err error
}

func (e producerFailure) Unwrap() []error { return []error{e.ProducerError, e.err} }

func directError(err error) error {
	return producerFailure{&ProducerError{Call: "get_next", Code: int(errno.Of(err)), Message: err.Error()}, err}
}

// An Option changes how a stream is imported.
type Option func(*config)

type config struct {
	maxEmpty   int
	importOpts []cdevice.ImportOption
}

// WithMaxEmptyBatches makes the import fail with ErrEmptyBatches after n
// consecutive zero-length batches: some producers, given an empty input,
// return empty batches forever.
func WithMaxEmptyBatches(n int) Option { return func(c *config) { c.maxEmpty = n } }

// WithImportOptions applies cdevice import options (such as
// cdevice.WithFullValidation) to every batch.
func WithImportOptions(opts ...cdevice.ImportOption) Option {
	return func(c *config) { c.importOpts = append(c.importOpts, opts...) }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}
