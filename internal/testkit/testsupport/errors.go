package testsupport

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/loader"
	"github.com/purearrow/cdevice/stream"
)

// A Sentinel is one documented error value and every name it goes by
// (aliases are one value: cdevice.ErrUnknownDevice is device.ErrUnknownDevice).
type Sentinel struct {
	Names []string // "pkg.ErrX", as docs/errors.md spells them
	Err   error
}

// Documented is every sentinel of docs/errors.md's table, in its order:
// every error that a function of the library returns wraps one of them.
// TestREADMEErrorTable keeps the two in step.
var Documented = []Sentinel{
	{[]string{"cdevice.ErrInvalid", "device.ErrInvalid"}, cdevice.ErrInvalid},
	{[]string{"cdevice.ErrReleased", "device.ErrReleased", "stream.ErrReleased"}, cdevice.ErrReleased},
	{[]string{"cdevice.ErrUnsupported"}, cdevice.ErrUnsupported},
	{[]string{"cdevice.ErrUnknownDevice", "device.ErrUnknownDevice"}, cdevice.ErrUnknownDevice},
	{[]string{"cdevice.ErrNotReadable"}, cdevice.ErrNotReadable},
	{[]string{"cdevice.ErrRuntime", "device.ErrRuntime"}, cdevice.ErrRuntime},
	{[]string{"device.ErrNotFound"}, device.ErrNotFound},
	{[]string{"device.ErrNoDevice"}, device.ErrNoDevice},
	{[]string{"device.ErrMissingSymbol"}, device.ErrMissingSymbol},
	{[]string{"loader.ErrBadDeviceSpec"}, loader.ErrBadDeviceSpec},
	{[]string{"loader.ErrUnavailable"}, loader.ErrUnavailable},
	{[]string{"cdevice.ErrProducer"}, cdevice.ErrProducer},
	{[]string{"stream.ErrEmptyBatches"}, stream.ErrEmptyBatches},
	{[]string{"async.ErrConsumer"}, async.ErrConsumer},
	{[]string{"dlpack.ErrNulls"}, dlpack.ErrNulls},
	{[]string{"dlpack.ErrNotContiguous"}, dlpack.ErrNotContiguous},
	{[]string{"dlpack.ErrVersion"}, dlpack.ErrVersion},
	{[]string{"cai.ErrInvalid"}, cai.ErrInvalid},
	{[]string{"cai.ErrUnsupported"}, cai.ErrUnsupported},
	{[]string{"cai.ErrNotCUDA"}, cai.ErrNotCUDA},
	{[]string{"context.Canceled"}, context.Canceled},
	{[]string{"context.DeadlineExceeded"}, context.DeadlineExceeded},
}

// DocumentedName returns the first name of the documented sentinel that err
// wraps, preferring the most specific one (a sentinel that wraps another
// comes before it), or "" when it wraps none.
func DocumentedName(err error) string {
	if err == nil {
		return ""
	}
	best := -1
	for i, s := range Documented {
		if !errors.Is(err, s.Err) {
			continue
		}
		// s is more specific than best when s wraps best.
		if best < 0 || errors.Is(s.Err, Documented[best].Err) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return Documented[best].Names[0]
}

// WantDocumented fails t unless err is not nil and wraps one of the
// documented sentinels.
func WantDocumented(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	if DocumentedName(err) == "" {
		t.Errorf("%s: error %q (%T) wraps none of the documented sentinels", what, err, err)
	}
}

// WantError fails t unless err wraps want (the specific sentinel of its
// path) and, through it, a documented sentinel.
func WantError(t testing.TB, what string, err, want error) {
	t.Helper()
	WantDocumented(t, what, err)
	if err != nil && !errors.Is(err, want) {
		t.Errorf("%s: error %q wraps %s, not %v", what, err, nameOf(err), want)
	}
}

func nameOf(err error) string {
	if n := DocumentedName(err); n != "" {
		return n
	}
	return fmt.Sprintf("no documented sentinel (%T)", err)
}

// ErrorCase is one error path of a table-driven test: a call driven into
// failure and the sentinel its error must wrap.
type ErrorCase struct {
	Name string
	Want error
	Call func(t *testing.T) error
}

// Case is an ErrorCase (a function, so that tables of cases need no keys).
func Case(name string, want error, call func(t *testing.T) error) ErrorCase {
	return ErrorCase{Name: name, Want: want, Call: call}
}

// RunErrorCases runs each case as a subtest and checks its error with
// WantError.
func RunErrorCases(t *testing.T, cases []ErrorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			WantError(t, c.Name, c.Call(t), c.Want)
		})
	}
}

// CanceledContext is a context already canceled: the error path of a call
// that takes one.
func CanceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
