// Package redact masks the credentials a user gave (a URI's password, the
// value of a password-like option, a connection string's password=...)
// wherever they appear in text about to be shown: error messages, log
// lines, a command's output. It masks those values and nothing else: a
// driver's message about the user's SQL arrives verbatim, whatever words
// it holds. A Secrets learns the credentials from the options and
// arguments the user gave (Option, Text) and masks them (String, Error,
// Writer).
package redact
