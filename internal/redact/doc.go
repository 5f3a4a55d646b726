// Package redact masks credentials in text that is about to be shown: a
// password in a URI's user information (scheme://user:***@host), whatever
// the scheme's spelling, and the value of a password-like key
// (password=***, PWD=***, "token": ***). Error messages, log lines and a
// command's output that may echo a connection string go through String;
// errors whose text may hold one go through Error.
package redact
