package adbc

import "strconv"

// Status is the outcome code of an ADBC operation. Its values are those of
// the C API's AdbcStatusCode.
type Status uint8

// The status codes. Besides StatusOK, each one classifies a failure.
const (
	// StatusOK means the operation succeeded.
	StatusOK Status = iota
	// StatusUnknown is a failure of no more specific kind.
	StatusUnknown
	// StatusNotImplemented means the driver or database does not support
	// the operation.
	StatusNotImplemented
	// StatusNotFound means a requested object (table, option, ...) does not
	// exist.
	StatusNotFound
	// StatusAlreadyExists means the object to create exists already.
	StatusAlreadyExists
	// StatusInvalidArgument means an argument is malformed or out of range,
	// usually a programming error.
	StatusInvalidArgument
	// StatusInvalidState means the object is not in a state that allows the
	// call (not initialized, not configured, already closed, ...).
	StatusInvalidState
	// StatusInvalidData means the data processed was bad (for example, a
	// division by zero during a query); reported by the database.
	StatusInvalidData
	// StatusIntegrity means a constraint of the database would be violated
	// (uniqueness, foreign key, ...).
	StatusIntegrity
	// StatusInternal is an error inside the driver or database.
	StatusInternal
	// StatusIO is an input/output failure, such as an unreachable server.
	StatusIO
	// StatusCancelled means the operation was cancelled, other than by a
	// timeout.
	StatusCancelled
	// StatusTimeout means the operation ran out of time.
	StatusTimeout
	// StatusUnauthenticated means authentication failed.
	StatusUnauthenticated
	// StatusUnauthorized means the client may not perform the operation.
	StatusUnauthorized
)

// statusNames holds the String of each defined Status, indexed by value.
var statusNames = [...]string{
	StatusOK:              "OK",
	StatusUnknown:         "Unknown",
	StatusNotImplemented:  "Not Implemented",
	StatusNotFound:        "Not Found",
	StatusAlreadyExists:   "Already Exists",
	StatusInvalidArgument: "Invalid Argument",
	StatusInvalidState:    "Invalid State",
	StatusInvalidData:     "Invalid Data",
	StatusIntegrity:       "Integrity Issue",
	StatusInternal:        "Internal",
	StatusIO:              "I/O",
	StatusCancelled:       "Cancelled",
	StatusTimeout:         "Timeout",
	StatusUnauthenticated: "Unauthenticated",
	StatusUnauthorized:    "Unauthorized",
}

// String returns the status's human-readable name ("Not Found", "I/O", ...),
// or "Status(N)" for a value outside the defined codes.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}
