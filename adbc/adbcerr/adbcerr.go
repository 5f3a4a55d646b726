package adbcerr

import (
	"errors"

	"github.com/apache/arrow-adbc/go/adbc"
)

// sentinel is the type of the sentinel errors, one per non-OK Status.
type sentinel struct{ code adbc.Status }

func (s *sentinel) Error() string { return "adbc: " + s.code.String() }

// Sentinel errors, one per Status other than StatusOK: errors.Is(err, X)
// is true when err is, or wraps, an error this package made (New, Wrap)
// whose Code is that Status.
var (
	Unknown         error = &sentinel{adbc.StatusUnknown}
	NotImplemented  error = &sentinel{adbc.StatusNotImplemented}
	NotFound        error = &sentinel{adbc.StatusNotFound}
	AlreadyExists   error = &sentinel{adbc.StatusAlreadyExists}
	InvalidArgument error = &sentinel{adbc.StatusInvalidArgument}
	InvalidState    error = &sentinel{adbc.StatusInvalidState}
	InvalidData     error = &sentinel{adbc.StatusInvalidData}
	Integrity       error = &sentinel{adbc.StatusIntegrity}
	Internal        error = &sentinel{adbc.StatusInternal}
	IO              error = &sentinel{adbc.StatusIO}
	Cancelled       error = &sentinel{adbc.StatusCancelled}
	Timeout         error = &sentinel{adbc.StatusTimeout}
	Unauthenticated error = &sentinel{adbc.StatusUnauthenticated}
	Unauthorized    error = &sentinel{adbc.StatusUnauthorized}
)

// Abandoned is what a connection answers while a call it abandoned when
// the call's context ended is still running in the driver (drivermgr's
// ErrAbandoned; errors.Is(err, InvalidState) holds for it too): the
// connection is of no use until that call returns, so that a pool
// discards one that meets it (sqldriver does).
var Abandoned = New(adbc.StatusInvalidState, "a call abandoned when its context ended is still running in the driver")

// sentinels are the sentinel errors by Status.
var sentinels = [...]error{
	adbc.StatusUnknown: Unknown, adbc.StatusNotImplemented: NotImplemented, adbc.StatusNotFound: NotFound,
	adbc.StatusAlreadyExists: AlreadyExists, adbc.StatusInvalidArgument: InvalidArgument,
	adbc.StatusInvalidState: InvalidState, adbc.StatusInvalidData: InvalidData, adbc.StatusIntegrity: Integrity,
	adbc.StatusInternal: Internal, adbc.StatusIO: IO, adbc.StatusCancelled: Cancelled, adbc.StatusTimeout: Timeout,
	adbc.StatusUnauthenticated: Unauthenticated, adbc.StatusUnauthorized: Unauthorized,
}

// Of returns the sentinel error of code: nil for StatusOK and for a code
// that is no Status of ADBC's.
func Of(code adbc.Status) error {
	if int(code) < len(sentinels) {
		return sentinels[code]
	}
	return nil
}

// matchable is an error holding an adbc.Error (itself, or what a driver
// returned around it) that errors.Is matches by the Error's Status.
type matchable struct {
	err  error
	code adbc.Status
}

func (m *matchable) Error() string { return m.err.Error() }

// Unwrap returns the error held, for errors.As.
func (m *matchable) Unwrap() error { return m.err }

// Is reports whether target is the sentinel of the error's Status.
func (m *matchable) Is(target error) bool {
	t, ok := target.(*sentinel)
	return ok && t.code == m.code
}

// Wrap returns e as an error that errors.Is matches by its Status and
// errors.As unwraps to e.
func Wrap(e adbc.Error) error { return &matchable{err: e, code: e.Code} }

// New is Wrap(adbc.Error{Code: code, Msg: msg}).
func New(code adbc.Status, msg string) error { return Wrap(adbc.Error{Code: code, Msg: msg}) }

// From returns err's adbc.Error, as Wrap made it or as any driver returns
// it (a value or a pointer), and whether it has one.
func From(err error) (adbc.Error, bool) {
	var e adbc.Error
	if errors.As(err, &e) {
		return e, true
	}
	var p *adbc.Error
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return adbc.Error{}, false
}

// Matchable returns err made matchable by status: an adbc.Error anywhere
// in it (as arrow-adbc's drivers return them, values or pointers) is
// wrapped so that errors.Is finds its sentinel; err itself stays in the
// chain. Other errors, and those matchable already, are returned as they
// are.
func Matchable(err error) error {
	var m *matchable
	if err == nil || errors.As(err, &m) {
		return err
	}
	if e, ok := From(err); ok {
		return &matchable{err: err, code: e.Code}
	}
	return err
}
