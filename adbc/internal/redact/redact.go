package redact

import (
	"errors"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// The shapes of a credential inside a value the user gave; group 1 is the
// credential.
var (
	// userinfo is a URI's password between user: and @ after its scheme
	// and slashes, in any spelling (postgresql://, pg_x://, 1pg://, the
	// typo postgresql:/). It runs to the last @ before white space or a
	// quote: one holding an unencoded @ is taken whole.
	userinfo = regexp.MustCompile(`(?i)\b[a-z0-9_+.\-]+:/+[^\s"'/:@]*:([^\s"']*)@`)
	// bareUserinfo is user:password@ without slashes before it, at the
	// start of a word (a MySQL DSN's alice:pw@tcp(h)): the credential runs
	// from the first colon, which may be the scheme's (postgresql:alice:pw@h:
	// Credentials then takes what follows the next colon too).
	bareUserinfo = regexp.MustCompile(`(?:^|[\s"'(=,;])[^\s"'/:@]+:([^\s"'/][^\s"']*)@`)
	// keyValue is a password-like key's value: key=value (libpq's
	// keywords, ODBC's PWD=...;, a query string's password=...&) or
	// "key": value, quoted or not.
	keyValue = regexp.MustCompile(`(?i)\b(?:` + secretKey + `)["']?\s*[=:]\s*('[^']*'|"[^"]*"|[^\s;&,'"]*)`)
	// secretOption is an option key whose whole value is a credential.
	secretOption = regexp.MustCompile(`(?i)(?:` + secretKey + `)`)
)

// secretKey names a credential: password, token, key and their kin.
const secretKey = `password|passwd|pwd|secret|credential|authorization|(?:auth|access|api|bearer|refresh|session)?[_-]?token|api[_-]?key|access[_-]?key|private[_-]?key`

// minPart is the shortest password taken from inside a word that may hold
// a user name before it.
const minPart = 4

// Mask replaces what is masked.
const Mask = "***"

// Credentials returns the credentials inside s, a value the user gave (a
// URI, a connection string, a DSN): a URI's password, percent-encoded and
// decoded, and the values of password-like keys.
func Credentials(s string) []string {
	var out []string
	add := func(v string) {
		v = strings.Trim(v, `'"`)
		if v == "" {
			return
		}
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	for _, re := range []*regexp.Regexp{userinfo, bareUserinfo, keyValue} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			add(m[1])
			// user:password after a scheme's colon, the password alone
			// where it is long enough not to mask common text.
			if re == bareUserinfo {
				if _, pw, ok := strings.Cut(m[1], ":"); ok && len(pw) >= minPart {
					add(pw)
				}
			}
		}
	}
	return out
}

// Secrets is a set of credentials to mask. The zero value masks nothing;
// a nil *Secrets too. It is safe for concurrent use.
type Secrets struct {
	mu   sync.RWMutex
	vals []string // longest first, so that one inside another is masked whole
}

// Add adds credentials.
func (s *Secrets) Add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vals {
		if v != "" && !slices.Contains(s.vals, v) {
			s.vals = append(s.vals, v)
		}
	}
	slices.SortFunc(s.vals, func(a, b string) int { return len(b) - len(a) })
}

// Option learns the credentials of an option the user set: its whole
// value where the key names a credential (password, token, ...), else
// the credentials inside it (Credentials: a uri's password).
func (s *Secrets) Option(key, value string) {
	if secretOption.MatchString(key) {
		s.Add(strings.TrimSpace(value))
	}
	s.Add(Credentials(value)...)
}

// Options is Option for each of opts.
func (s *Secrets) Options(opts map[string]string) {
	for k, v := range opts {
		s.Option(k, v)
	}
}

// Text learns the credentials inside a text the user gave (a command-line
// argument): Credentials, and Option's for a key=value.
func (s *Secrets) Text(t string) {
	if k, v, ok := strings.Cut(strings.TrimLeft(t, "-"), "="); ok {
		s.Option(k, v)
	}
	s.Add(Credentials(t)...)
}

// String is t with every credential of s masked.
func (s *Secrets) String(t string) string {
	if s == nil {
		return t
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.vals {
		t = strings.ReplaceAll(t, v, Mask)
	}
	return t
}

// Error is err with its text masked by String, or err itself where its
// text shows no credential. errors.Is still finds what err matches, and
// errors.As an adbc.Error in it (its message masked); the original text
// stays unreachable (errors.Unwrap sees nothing beneath it).
func (s *Secrets) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &masked{msg: msg, err: err, s: s}
}

type masked struct {
	msg string
	err error
	s   *Secrets
}

func (e *masked) Error() string { return e.msg }

func (e *masked) Is(target error) bool { return errors.Is(e.err, target) }

// As finds an adbc.Error (or *adbc.Error) in the original, masked.
func (e *masked) As(target any) bool {
	ae, found := adbcerr.From(e.err)
	if !found {
		return false
	}
	ae.Msg = e.s.String(ae.Msg)
	switch t := target.(type) {
	case *adbc.Error:
		*t = ae
	case **adbc.Error:
		*t = &ae
	default:
		return false
	}
	return true
}

// Writer is w with the text of every write masked by String. A credential
// split across two writes is not seen: write whole messages.
func (s *Secrets) Writer(w io.Writer) io.Writer { return writer{w, s} }

type writer struct {
	w io.Writer
	s *Secrets
}

func (m writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(m.w, m.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
