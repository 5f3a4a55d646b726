package adbc

// ErrorDetail is a piece of driver-specific information attached to an
// Error, beyond its message and codes: a header, a structured payload, ...
type ErrorDetail interface {
	// Key names the detail, so that clients can tell what it holds.
	Key() string
	// Serialize returns the detail's value as bytes, the form the C API
	// passes it on in.
	Serialize() ([]byte, error)
}

// TextErrorDetail is an ErrorDetail holding a human-readable string.
type TextErrorDetail struct {
	Name   string
	Detail string
}

// Key returns d.Name.
func (d *TextErrorDetail) Key() string { return d.Name }

// Serialize returns the bytes of d.Detail.
func (d *TextErrorDetail) Serialize() ([]byte, error) { return []byte(d.Detail), nil }

// BinaryErrorDetail is an ErrorDetail holding opaque bytes.
type BinaryErrorDetail struct {
	Name   string
	Detail []byte
}

// Key returns d.Name.
func (d *BinaryErrorDetail) Key() string { return d.Name }

// Serialize returns d.Detail itself, not a copy.
func (d *BinaryErrorDetail) Serialize() ([]byte, error) { return d.Detail, nil }

// Error is the error ADBC operations fail with. Error, not *Error, implements
// the error interface, so errors.As(err, &e) takes an e of type Error.
type Error struct {
	// Msg is the human-readable message.
	Msg string
	// Code classifies the failure.
	Code Status
	// VendorCode is the database's own error code, where it has one.
	VendorCode int32
	// SqlState is the five-character SQLSTATE code (SQL:2003), or all zero
	// bytes when there is none.
	SqlState [5]byte
	// Details carries further driver-specific information.
	Details []ErrorDetail
}

// Error formats e as "<code>: <msg>", followed by " (<sqlstate>)" when a
// SQLSTATE is set (its first byte is not zero).
func (e Error) Error() string {
	s := e.Code.String() + ": " + e.Msg
	if e.SqlState[0] != 0 {
		s += " (" + string(e.SqlState[:]) + ")"
	}
	return s
}

// Is reports whether target is the sentinel error of e.Code (ErrNotFound for
// StatusNotFound, and so on), which makes errors.Is match errors by status.
// It matches nothing else: in particular not another Error.
func (e Error) Is(target error) bool {
	s, ok := target.(*statusError)
	return ok && s.code == e.Code
}

// statusError is the type of the sentinel errors, one per non-OK Status.
type statusError struct{ code Status }

func (s *statusError) Error() string { return "adbc: " + s.code.String() }

// Sentinel errors, one per Status other than StatusOK: errors.Is(err, ErrX)
// is true when err is, or wraps, an Error whose Code is StatusX. A sentinel
// also matches itself, so drivers may return or wrap them directly, though
// errors.As finds no Error in them.
var (
	ErrUnknown         error = &statusError{StatusUnknown}
	ErrNotImplemented  error = &statusError{StatusNotImplemented}
	ErrNotFound        error = &statusError{StatusNotFound}
	ErrAlreadyExists   error = &statusError{StatusAlreadyExists}
	ErrInvalidArgument error = &statusError{StatusInvalidArgument}
	ErrInvalidState    error = &statusError{StatusInvalidState}
	ErrInvalidData     error = &statusError{StatusInvalidData}
	ErrIntegrity       error = &statusError{StatusIntegrity}
	ErrInternal        error = &statusError{StatusInternal}
	ErrIO              error = &statusError{StatusIO}
	ErrCancelled       error = &statusError{StatusCancelled}
	ErrTimeout         error = &statusError{StatusTimeout}
	ErrUnauthenticated error = &statusError{StatusUnauthenticated}
	ErrUnauthorized    error = &statusError{StatusUnauthorized}
)
