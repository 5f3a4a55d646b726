package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
)

// The credentials inside what a user gives, in every shape of connection
// string, scheme spelled any way.
func TestCredentials(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"postgresql://alice:S3cretPW@db.example/x", []string{"S3cretPW"}},
		{"pg_x://alice:S3cretPW@h/db", []string{"S3cretPW"}},
		{"1pg://alice:S3cretPW@h", []string{"S3cretPW"}},
		{"postgresql:/alice:S3cretPW@h/db", []string{"S3cretPW"}},
		{"postgresql:alice:S3cretPW@h", []string{"alice:S3cretPW"}},
		{"alice:S3cretPW@tcp(h:3306)/db", []string{"S3cretPW"}},
		{"postgres://alice:S3c/ret@PW@h/db", []string{"S3c/ret@PW"}},
		{"postgresql://alice:p%40ss%2Fw@h", []string{"p%40ss%2Fw", "p@ss/w"}},
		{"host=h user=alice password=S3cretPW dbname=x", []string{"S3cretPW"}},
		{"host=h password='S3 cret PW' dbname=x", []string{"S3 cret PW"}},
		{"Driver={x};UID=alice;PWD=S3cretPW;Server=h", []string{"S3cretPW"}},
		{"https://h/db?user=alice&password=S3cretPW&x=1", []string{"S3cretPW"}},
		{"postgresql://alice@h/db", nil},
		{"file:demo.db", nil},
		{"sqlite:file::memory:", nil},
	} {
		got := Credentials(c.in)
		for _, w := range c.want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("Credentials(%q) = %q, want %q among them", c.in, got, w)
			}
		}
		if len(c.want) == 0 && len(got) != 0 {
			t.Errorf("Credentials(%q) = %q, want none", c.in, got)
		}
	}
}

// What is masked is what the user gave, wherever it appears, and nothing
// else: a database's message about the user's SQL arrives as written,
// whatever words it holds (token, password, key=value, user@host).
func TestOnlyWhatWasGiven(t *testing.T) {
	var s Secrets
	s.Option("uri", "postgresql://alice:S3cretPW@h/db")
	s.Option("adbc.snowflake.sql.auth_token", "T0kenValue")
	s.Option("password", " spaced ")
	for _, c := range []struct{ in, want string }{
		{"could not connect to postgresql://alice:S3cretPW@h/db", "could not connect to postgresql://alice:***@h/db"},
		{"bad token T0kenValue", "bad token ***"},
		{"password spaced rejected", "password *** rejected"},
		// Verbatim.
		{`unrecognized token: "'abc"`, `unrecognized token: "'abc"`},
		{`near "@": syntax error`, `near "@": syntax error`},
		{"password=hunter2 is not the user's", "password=hunter2 is not the user's"},
		{`{"token": "x"} at postgresql://bob:other@h`, `{"token": "x"} at postgresql://bob:other@h`},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("String(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	var none *Secrets
	if got := none.String("password=x"); got != "password=x" {
		t.Errorf("a nil Secrets masked %q", got)
	}
}

func TestError(t *testing.T) {
	var s Secrets
	s.Option("uri", "postgresql://alice:S3cretPW@h")
	inner := fmt.Errorf("dlopen postgresql://alice:S3cretPW@h: %w", fs.ErrNotExist)
	err := s.Error(fmt.Errorf("driver: %w", errors.Join(adbc.Error{Code: adbc.StatusNotFound, Msg: "no S3cretPW"}, inner)))
	if strings.Contains(err.Error(), "S3cretPW") || !strings.Contains(err.Error(), "alice:***@h") {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the masked error does not match what the original matched")
	}
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusNotFound || ae.Msg != "no ***" {
		t.Errorf("errors.As: %v, %+v; want the adbc.Error, masked", errors.As(err, &ae), ae)
	}
	var pe *adbc.Error
	if !errors.As(err, &pe) || pe.Msg != "no ***" {
		t.Errorf("errors.As *adbc.Error: %+v", pe)
	}
	if errors.Unwrap(err) != nil {
		t.Error("the original text is reachable through Unwrap")
	}
	if plain := errors.New("nothing secret"); s.Error(plain) != plain {
		t.Error("an error without credentials was wrapped")
	}
	if s.Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// Whatever characters a password holds (but white space and quotes, which
// end a connection string), given in any shape of connection string, it
// is masked wherever it appears later.
func TestPasswordNeverShown(t *testing.T) {
	const chars = "abcXYZ019!#$%^&*()-_=+[]{}|;:,.<>/?~`@\\"
	shapes := []string{"postgresql://alice:%s@h/db", "pg_x://alice:%s@h", "1pg://alice:%s@h", "postgresql:/alice:%s@h",
		"x+y.z-w://:%s@h", "password=%s", "PWD=%s;", "a=1&password=%s&b=2", "alice:%s@tcp(h)/db"}
	seed := uint32(1)
	for range 2000 {
		n := 8 + int(seed%12)
		pw := make([]byte, n)
		for i := range pw {
			seed = seed*1664525 + 1013904223
			pw[i] = chars[int(seed>>16)%len(chars)]
		}
		secret := "Zq" + string(pw) // never empty, never all punctuation
		for _, shape := range shapes {
			given := fmt.Sprintf(shape, secret)
			var s Secrets
			s.Text("--uri=" + given)
			msg := fmt.Sprintf("driver %q failed: %s", given, secret)
			if got := s.String(msg); strings.Contains(got, secret) {
				t.Fatalf("given %q: String(%q) = %q shows the password", given, msg, got)
			}
		}
	}
}
