package stream

import (
	"fmt"

	"github.com/purearrow/cdevice"
)

var (
	// ErrEmptyBatches: the producer sent more consecutive empty batches than
	// WithMaxEmptyBatches allows. It wraps cdevice.ErrInvalid.
	ErrEmptyBatches = fmt.Errorf("%w: stream: too many consecutive empty batches", cdevice.ErrInvalid)
	// ErrReleased: the stream struct was already released.
	ErrReleased = cdevice.ErrReleased
)

// producerFailure is the error of a get_next of our own exported stream read
// directly (identity imports): the *cdevice.ProducerError a C consumer would see,
// with the producer's own error still in the chain.
type producerFailure struct {
	*cdevice.ProducerError
	err error
}

func (e producerFailure) Unwrap() []error { return []error{e.ProducerError, e.err} }

func directError(err error) error {
	return producerFailure{&cdevice.ProducerError{Call: "get_next", Code: int(cdevice.ErrnoOf(err)), Message: err.Error()}, err}
}

// An Option changes how a stream is imported (or, WithOnRelease, exported).
type Option struct{ apply func(*config) }

type config struct {
	maxEmpty   int
	importOpts []cdevice.ImportOption
	onRelease  func()
}

// WithMaxEmptyBatches makes the import fail with ErrEmptyBatches after n
// consecutive zero-length batches: some producers, given an empty input,
// return empty batches forever.
func WithMaxEmptyBatches(n int) Option { return Option{func(c *config) { c.maxEmpty = n }} }

// WithImportOptions applies cdevice import options (such as
// cdevice.WithFullValidation) to every batch.
func WithImportOptions(opts ...cdevice.ImportOption) Option {
	return Option{func(c *config) { c.importOpts = append(c.importOpts, opts...) }}
}

// WithOnRelease has ExportDeviceStream call f once, when the consumer
// releases the stream, after the batch source is stopped: how a source that
// holds something (a network call, a file) learns the consumer is done, also
// when it released the stream before reading a batch (a sequence that never
// started is never told).
func WithOnRelease(f func()) Option { return Option{func(c *config) { c.onRelease = f }} }

func newConfig(opts []Option) config {
	var c config
	c.apply(opts)
	return c
}

// apply applies opts to c in place (an import's config lives in its
// reader: no copy of its own on the heap).
func (c *config) apply(opts []Option) {
	for _, o := range opts {
		if o.apply != nil {
			o.apply(c)
		}
	}
}
