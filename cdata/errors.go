package cdata

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
)

// compatError is a cdevice error that also matches the sentinels arrow-go's
// cdata wraps for the same failure, so errors.Is checks written for
// arrow-go keep working.
type compatError struct {
	err  error
	also []error
}

func (e *compatError) Error() string   { return e.err.Error() }
func (e *compatError) Unwrap() []error { return append([]error{e.err}, e.also...) }

// compat adds arrow-go's sentinels to err: arrow.ErrInvalid to invalid input
// and to input arrow-go cannot represent (its importer reports both as
// invalid), and arrow.ErrNotImplemented to the latter too. A producer's code
// is in the chain already, as a cdevice.Errno that errors.As finds as the
// syscall.Errno arrow-go's stream reader reports.
func compat(err error) error {
	if err == nil {
		return nil
	}
	var also []error
	unsupported := errors.Is(err, cdevice.ErrUnsupported)
	if (unsupported || errors.Is(err, cdevice.ErrInvalid)) && !errors.Is(err, arrow.ErrInvalid) {
		also = append(also, arrow.ErrInvalid)
	}
	if unsupported && !errors.Is(err, arrow.ErrNotImplemented) {
		also = append(also, arrow.ErrNotImplemented)
	}
	if len(also) == 0 {
		return err
	}
	return &compatError{err: err, also: also}
}
