package adbc_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/purearrow/cdevice/adbc"
)

var sentinels = []struct {
	code adbc.Status
	err  error
}{
	{adbc.StatusUnknown, adbc.ErrUnknown},
	{adbc.StatusNotImplemented, adbc.ErrNotImplemented},
	{adbc.StatusNotFound, adbc.ErrNotFound},
	{adbc.StatusAlreadyExists, adbc.ErrAlreadyExists},
	{adbc.StatusInvalidArgument, adbc.ErrInvalidArgument},
	{adbc.StatusInvalidState, adbc.ErrInvalidState},
	{adbc.StatusInvalidData, adbc.ErrInvalidData},
	{adbc.StatusIntegrity, adbc.ErrIntegrity},
	{adbc.StatusInternal, adbc.ErrInternal},
	{adbc.StatusIO, adbc.ErrIO},
	{adbc.StatusCancelled, adbc.ErrCancelled},
	{adbc.StatusTimeout, adbc.ErrTimeout},
	{adbc.StatusUnauthenticated, adbc.ErrUnauthenticated},
	{adbc.StatusUnauthorized, adbc.ErrUnauthorized},
}

func TestSentinelsMatchTheirStatusOnly(t *testing.T) {
	if len(sentinels) != int(adbc.StatusUnauthorized) {
		t.Fatalf("%d sentinels for %d non-OK statuses", len(sentinels), adbc.StatusUnauthorized)
	}
	for code := range 256 {
		e := adbc.Error{Msg: "boom", Code: adbc.Status(code), SqlState: [5]byte{'H', 'Y', '0', '0', '0'}}
		for _, s := range sentinels {
			want := s.code == adbc.Status(code)
			forms := map[string]error{
				"value":         e,
				"pointer":       &e,
				"wrapped":       fmt.Errorf("ctx: %w", e),
				"wrapped twice": fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", &e)),
				"joined":        errors.Join(errors.New("other"), e),
			}
			for form, err := range forms {
				if got := errors.Is(err, s.err); got != want {
					t.Errorf("errors.Is(%s Error{Code: %v}, %v) = %v, want %v", form, adbc.Status(code), s.err, got, want)
				}
			}
		}
	}
}

func TestSentinelsAreDistinct(t *testing.T) {
	for i, a := range sentinels {
		if a.err == nil || a.err.Error() == "" {
			t.Fatalf("sentinel of %v is empty", a.code)
		}
		for j, b := range sentinels {
			if got := errors.Is(a.err, b.err); got != (i == j) {
				t.Errorf("errors.Is(%v, %v) = %v", a.err, b.err, got)
			}
		}
		var e adbc.Error
		if errors.As(a.err, &e) {
			t.Errorf("errors.As found an Error in sentinel %v", a.err)
		}
	}
}

func TestErrorIsMatchesNoOtherError(t *testing.T) {
	e := adbc.Error{Code: adbc.StatusNotFound}
	for _, target := range []error{
		adbc.Error{Code: adbc.StatusNotFound},
		&adbc.Error{Code: adbc.StatusNotFound},
		errors.New("Not Found"),
	} {
		if errors.Is(e, target) {
			t.Errorf("errors.Is(%v, %#v) = true", e, target)
		}
	}
}

func TestErrorAs(t *testing.T) {
	orig := adbc.Error{Msg: "no table", Code: adbc.StatusNotFound, VendorCode: 42, Details: []adbc.ErrorDetail{&adbc.TextErrorDetail{Name: "k", Detail: "v"}}}
	var e adbc.Error
	if !errors.As(fmt.Errorf("wrap: %w", orig), &e) {
		t.Fatal("errors.As(wrapped Error, *Error) = false")
	}
	if e.Msg != orig.Msg || e.Code != orig.Code || e.VendorCode != 42 || len(e.Details) != 1 {
		t.Errorf("errors.As gave %+v, want %+v", e, orig)
	}
	// A *Error in the chain is found by a **Error target, as in arrow-adbc.
	var p *adbc.Error
	if !errors.As(fmt.Errorf("wrap: %w", &orig), &p) || p != &orig {
		t.Error("errors.As(wrapped *Error, **Error) did not find it")
	}
}

func TestErrorString(t *testing.T) {
	cases := []struct {
		e    adbc.Error
		want string
	}{
		{adbc.Error{Msg: "no such table", Code: adbc.StatusNotFound}, "Not Found: no such table"},
		{adbc.Error{Msg: "x", Code: adbc.StatusIO, SqlState: [5]byte{'0', '8', '0', '0', '1'}}, "I/O: x (08001)"},
		{adbc.Error{Code: adbc.StatusOK}, "OK: "},
		{adbc.Error{Msg: "m", Code: 77}, "Status(77): m"},
		// Only the first byte decides; the rest is kept as it is.
		{adbc.Error{Msg: "m", Code: adbc.StatusInternal, SqlState: [5]byte{'4', '2'}}, "Internal: m (42\x00\x00\x00)"},
		{adbc.Error{Msg: "m", Code: adbc.StatusInternal, SqlState: [5]byte{0, '2'}}, "Internal: m"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestErrorDetails(t *testing.T) {
	text := &adbc.TextErrorDetail{Name: "hint", Detail: "try again"}
	bin := &adbc.BinaryErrorDetail{Name: "raw", Detail: []byte{1, 2, 3}}
	for _, c := range []struct {
		d    adbc.ErrorDetail
		key  string
		want string
	}{
		{text, "hint", "try again"},
		{bin, "raw", "\x01\x02\x03"},
	} {
		if c.d.Key() != c.key {
			t.Errorf("Key() = %q, want %q", c.d.Key(), c.key)
		}
		b, err := c.d.Serialize()
		if err != nil || string(b) != c.want {
			t.Errorf("Serialize() = %q, %v; want %q", b, err, c.want)
		}
	}
}
