package adbcerr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// Every sentinel matches the errors of its status, made by New, Wrap or
// Matchable (over a value or a pointer, as drivers return them), through
// further wrapping; errors.As finds the adbc.Error; no sentinel matches
// another status.
func TestStatusMatching(t *testing.T) {
	sentinels := map[adbc.Status]error{}
	for code := adbc.StatusUnknown; code <= adbc.StatusUnauthorized; code++ {
		if sentinels[code] = adbcerr.Of(code); sentinels[code] == nil {
			t.Fatalf("no sentinel of %v", code)
		}
	}
	if adbcerr.Of(adbc.StatusOK) != nil || adbcerr.Of(adbc.StatusUnauthorized+1) != nil {
		t.Error("a sentinel of OK, or of no status")
	}
	for code, want := range sentinels {
		e := adbc.Error{Code: code, Msg: "m", SqlState: [5]byte{'4', '2', 'S', '0', '2'}}
		for name, err := range map[string]error{
			"New":              adbcerr.New(code, "m"),
			"Wrap":             adbcerr.Wrap(e),
			"Matchable(value)": adbcerr.Matchable(fmt.Errorf("driver: %w", e)),
			"Matchable(ptr)":   adbcerr.Matchable(&e),
			"wrapped":          fmt.Errorf("outer: %w", adbcerr.Wrap(e)),
			"Matchable, twice": adbcerr.Matchable(adbcerr.Matchable(&e)),
		} {
			if !errors.Is(err, want) {
				t.Errorf("%s %v: errors.Is(%v) false", name, code, want)
			}
			for other, s := range sentinels {
				if other != code && errors.Is(err, s) {
					t.Errorf("%s %v matches %v", name, code, s)
				}
			}
			got, ok := adbcerr.From(err)
			if !ok || got.Code != code || got.Msg != "m" {
				t.Errorf("%s %v: From = %+v, %v", name, code, got, ok)
			}
		}
		var as adbc.Error
		if !errors.As(adbcerr.Wrap(e), &as) || as.SqlState != e.SqlState {
			t.Errorf("%v: errors.As found %+v", code, as)
		}
	}
	plain := errors.New("not ADBC's")
	if adbcerr.Matchable(plain) != plain || adbcerr.Matchable(nil) != nil {
		t.Error("Matchable changed an error with no adbc.Error in it")
	}
	if _, ok := adbcerr.From(plain); ok {
		t.Error("From found an adbc.Error in a plain error")
	}
}
