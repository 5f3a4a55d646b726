package cdevice

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// An Errno is an errno-style code that crosses the C ABI: a stream's
// get_schema and get_next results, an async producer's on_error, a handler
// callback's result. Its values are the platform C runtime's (errno.h), which
// differ between Linux, macOS and Windows: ECANCELED is 125, 89 and 105.
// Go's syscall.Errno is not that on Windows (there it is a Win32 error
// code, and syscall.EIO an invented value), so codes from and for C are
// Errno values: an Errno matches the natural Go error of its condition with
// errors.Is (syscall.EIO for EIO on every platform, context.Canceled for
// ECANCELED, context.DeadlineExceeded for ETIMEDOUT, errors.ErrUnsupported
// for ENOSYS and ENOTSUP) and errors.As finds the syscall.Errno of it.
type Errno int32

// The codes with a name, as the platform's C runtime numbers them.
const (
	EPERM     = Errno(ePERM)
	ENOENT    = Errno(eNOENT)
	EIO       = Errno(eIO)
	EAGAIN    = Errno(eAGAIN)
	ENOMEM    = Errno(eNOMEM)
	EACCES    = Errno(eACCES)
	EBUSY     = Errno(eBUSY)
	ENODEV    = Errno(eNODEV)
	EINVAL    = Errno(eINVAL)
	ENOSPC    = Errno(eNOSPC)
	EPIPE     = Errno(ePIPE)
	ENOSYS    = Errno(eNOSYS)
	EOVERFLOW = Errno(eOVERFLOW)
	ENOTSUP   = Errno(eNOTSUP)
	ECANCELED = Errno(eCANCELED)
	ETIMEDOUT = Errno(eTIMEDOUT)
)

// errnos are the named codes: their names, texts, and the Go errors of
// the same condition (this platform's syscall.Errno first).
var errnos = []struct {
	code    Errno
	name    string
	text    string
	natural []error
}{
	{EPERM, "EPERM", "operation not permitted", []error{syscall.EPERM}},
	{ENOENT, "ENOENT", "no such file or directory", []error{syscall.ENOENT}},
	{EIO, "EIO", "input/output error", []error{syscall.EIO}},
	{EAGAIN, "EAGAIN", "resource temporarily unavailable", []error{syscall.EAGAIN}},
	{ENOMEM, "ENOMEM", "cannot allocate memory", []error{syscall.ENOMEM}},
	{EACCES, "EACCES", "permission denied", []error{syscall.EACCES}},
	{EBUSY, "EBUSY", "device or resource busy", []error{syscall.EBUSY}},
	{ENODEV, "ENODEV", "no such device", []error{syscall.ENODEV}},
	{EINVAL, "EINVAL", "invalid argument", []error{syscall.EINVAL}},
	{ENOSPC, "ENOSPC", "no space left on device", []error{syscall.ENOSPC}},
	{EPIPE, "EPIPE", "broken pipe", []error{syscall.EPIPE}},
	{ENOSYS, "ENOSYS", "function not implemented", []error{syscall.ENOSYS, errors.ErrUnsupported}},
	{EOVERFLOW, "EOVERFLOW", "value too large for defined data type", []error{syscall.EOVERFLOW}},
	{ENOTSUP, "ENOTSUP", "operation not supported", []error{syscall.ENOTSUP, errors.ErrUnsupported}},
	{ECANCELED, "ECANCELED", "operation canceled", []error{syscall.ECANCELED, context.Canceled}},
	{ETIMEDOUT, "ETIMEDOUT", "connection timed out", []error{syscall.ETIMEDOUT, context.DeadlineExceeded}},
}

func (e Errno) named() int {
	for i := range errnos {
		if errnos[i].code == e {
			return i
		}
	}
	return -1
}

// Error is the code's text and name, "input/output error (EIO)", the same
// on every platform; a code without a name says its number.
func (e Errno) Error() string {
	if i := e.named(); i >= 0 {
		return fmt.Sprintf("%s (%s)", errnos[i].text, errnos[i].name)
	}
	return fmt.Sprintf("errno %d", int32(e))
}

// Is reports whether target is a Go error of the same condition: the
// platform's syscall.Errno of it (and what that one matches: fs.ErrPermission
// for EACCES, say), or the context and errors sentinels above.
func (e Errno) Is(target error) bool {
	i := e.named()
	if i < 0 {
		return false
	}
	for _, n := range errnos[i].natural {
		if target == n {
			return true
		}
	}
	se := errnos[i].natural[0].(syscall.Errno)
	return se.Is(target)
}

// As sets a *syscall.Errno target to the platform's syscall.Errno of the
// same condition.
func (e Errno) As(target any) bool {
	p, ok := target.(*syscall.Errno)
	if !ok {
		return false
	}
	if i := e.named(); i >= 0 {
		*p = errnos[i].natural[0].(syscall.Errno)
		return true
	}
	return false
}

// ErrnoOf is the code a C consumer gets for err: an Errno in its chain as
// it is, a syscall.Errno as the C runtime numbers its condition, EINVAL for
// invalid input (ErrInvalid), ECANCELED for a done context, EIO otherwise.
func ErrnoOf(err error) Errno {
	var e Errno
	if errors.As(err, &e) && e != 0 {
		return e
	}
	var se syscall.Errno
	if errors.As(err, &se) && se != 0 {
		for _, n := range errnos {
			if n.natural[0] == se {
				return n.code
			}
		}
		return errnoOfSyscall(se)
	}
	switch {
	case errors.Is(err, ErrInvalid):
		return EINVAL
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ECANCELED
	}
	return EIO
}
