package adbc_test

import (
	"testing"

	"github.com/purearrow/cdevice/adbc"
)

// The names arrow-adbc's stringer-generated Status.String returns.
var statusStrings = []struct {
	s    adbc.Status
	want string
}{
	{adbc.StatusOK, "OK"},
	{adbc.StatusUnknown, "Unknown"},
	{adbc.StatusNotImplemented, "Not Implemented"},
	{adbc.StatusNotFound, "Not Found"},
	{adbc.StatusAlreadyExists, "Already Exists"},
	{adbc.StatusInvalidArgument, "Invalid Argument"},
	{adbc.StatusInvalidState, "Invalid State"},
	{adbc.StatusInvalidData, "Invalid Data"},
	{adbc.StatusIntegrity, "Integrity Issue"},
	{adbc.StatusInternal, "Internal"},
	{adbc.StatusIO, "I/O"},
	{adbc.StatusCancelled, "Cancelled"},
	{adbc.StatusTimeout, "Timeout"},
	{adbc.StatusUnauthenticated, "Unauthenticated"},
	{adbc.StatusUnauthorized, "Unauthorized"},
	{15, "Status(15)"},
	{100, "Status(100)"},
	{255, "Status(255)"},
}

func TestStatusString(t *testing.T) {
	for _, c := range statusStrings {
		if got := c.s.String(); got != c.want {
			t.Errorf("Status(%d).String() = %q, want %q", uint8(c.s), got, c.want)
		}
	}
}

func TestStatusValues(t *testing.T) {
	// The codes are those of the C API's ADBC_STATUS_* macros.
	for i, c := range statusStrings[:15] {
		if int(c.s) != i {
			t.Errorf("%s = %d, want %d", c.want, c.s, i)
		}
	}
}
