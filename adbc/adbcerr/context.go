package adbcerr

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-adbc/go/adbc"
)

// Ended is the error of a call (what) that its context stopped: ctx's
// error (context.Canceled or context.DeadlineExceeded) and its cause,
// with the error the call itself came back with, if any (also: the
// driver's own error, or Abandoned where the call still runs in the
// driver). errors.Is finds ctx's error, its cause and whatever also
// matches. Its ADBC status is the driver's where also carries one (what
// the database said happened), else the context's: Cancelled for a
// cancel, Timeout for a deadline (errors.Is matches its sentinel, and
// errors.As finds that adbc.Error first). Its text says which it was:
// "canceled" where the context was cancelled, "deadline exceeded" only
// where its deadline passed.
func Ended(ctx context.Context, what string, also error) error {
	cerr := ctx.Err()
	e := &ended{code: adbc.StatusCancelled, msg: what + ": " + cerr.Error()}
	if errors.Is(cerr, context.DeadlineExceeded) {
		e.code = adbc.StatusTimeout
	}
	cause := context.Cause(ctx)
	if cause == cerr {
		cause = nil
	}
	if cause != nil {
		e.msg += " (" + cause.Error() + ")"
	}
	ctxErrs := []error{adbc.Error{Code: e.code, Msg: e.msg}, cerr}
	if cause != nil {
		ctxErrs = append(ctxErrs, cause)
	}
	_, driverSaid := From(also)
	abandoned := errors.Is(also, Abandoned)
	e.own = !driverSaid || abandoned
	switch {
	case also == nil:
		e.errs = ctxErrs
	case e.own: // the context's status first, for errors.As
		e.errs = append(ctxErrs, also)
	default: // the driver's
		e.errs = append([]error{also}, ctxErrs...)
	}
	switch {
	case abandoned:
		e.msg += "; abandoned: the driver has not returned, and the connection answers InvalidState until it does"
	case also != nil:
		e.msg = fmt.Sprintf("%s; the call failed: %v", e.msg, also)
	}
	return e
}

// ended is Ended's error.
type ended struct {
	msg  string
	code adbc.Status // the context's status
	own  bool        // the status is the context's: the driver said none
	errs []error
}

func (e *ended) Error() string { return e.msg }

func (e *ended) Unwrap() []error { return e.errs }

// Is matches the sentinel of the context's status, where it is the
// error's.
func (e *ended) Is(target error) bool {
	t, ok := target.(*sentinel)
	return ok && e.own && t.code == e.code
}
