package redact

import (
	"errors"
	"io"
	"regexp"
)

var (
	// userinfo is a URI's user:password@ after its scheme and slashes, in
	// any spelling (postgresql://, pg_x://, 1pg://, the typo postgresql:/).
	// The password runs to the last @ before white space or a quote: one
	// that holds an unencoded @ is masked whole, at the cost of the host
	// where a later @ follows.
	userinfo = regexp.MustCompile(`(?i)\b([a-z0-9_+.\-]+:/+[^\s"'/:@]*):[^\s"']*@`)
	// bareUserinfo is user:password@ without slashes before it, at the
	// start of a word (a MySQL DSN's alice:pw@tcp(h)); the password runs
	// from the first colon (postgresql:alice:pw@h masks alice too).
	bareUserinfo = regexp.MustCompile(`(^|[\s"'(=,;])([^\s"'/:@]+):[^\s"'/][^\s"']*@`)
	// keyValue is a password-like key and its value: key=value (libpq's
	// keywords, ODBC's PWD=...;, a query string's password=...&) or
	// "key": value.
	keyValue = regexp.MustCompile(`(?i)\b((?:password|passwd|pwd|secret|(?:auth|access|api|bearer)?[_-]?token|api[_-]?key|access[_-]?key)["']?\s*[=:]\s*)('[^']*'|"[^"]*"|[^\s;&,'"]*)`)
)

// Mask replaces what is masked.
const Mask = "***"

// String is s with every credential masked.
func String(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}:"+Mask+"@")
	s = bareUserinfo.ReplaceAllString(s, "${1}${2}:"+Mask+"@")
	return keyValue.ReplaceAllString(s, "${1}"+Mask)
}

// Error is err with its text masked by String; errors.Is still finds what
// err matches. The original text stays unreachable: the result does not
// unwrap to err (errors.Unwrap and errors.As see nothing beneath it).
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &masked{msg: msg, err: err}
}

type masked struct {
	msg string
	err error
}

func (e *masked) Error() string { return e.msg }

func (e *masked) Is(target error) bool { return errors.Is(e.err, target) }

// Writer is w with the text of every write masked by String. A credential
// split across two writes is not seen: write whole messages.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (m writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(m.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
