// Package errno is the errno-style codes that the stream and async
// interfaces hand to C (POSIX numbers, whatever the OS), and the one rule
// that picks a code for a Go error.
package errno

import (
	"context"
	"errors"
	"syscall"

	"github.com/purearrow/cdevice/device"
)

// The codes this library hands out.
const (
	EIO       = 5
	ENOMEM    = 12
	EINVAL    = 22
	ECANCELED = 125
)

// Of picks the code a C consumer gets for err: a syscall.Errno in the chain
// as it is, EINVAL for invalid input (cdevice.ErrInvalid, which is
// device.ErrInvalid), ECANCELED for a done context, EIO otherwise.
func Of(err error) int32 {
	var n syscall.Errno
	switch {
	case errors.As(err, &n) && n != 0:
		return int32(n)
	case errors.Is(err, device.ErrInvalid):
		return EINVAL
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ECANCELED
	}
	return EIO
}
