package errno

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/purearrow/cdevice/device"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int32
	}{
		{fmt.Errorf("wrapped: %w", syscall.ENOSPC), int32(syscall.ENOSPC)},
		{fmt.Errorf("%w: bad", device.ErrInvalid), EINVAL},
		{fmt.Errorf("read: %w", context.Canceled), ECANCELED},
		{context.DeadlineExceeded, ECANCELED},
		{errors.New("anything else"), EIO},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
