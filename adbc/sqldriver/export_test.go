package sqldriver

import "time"

// SetIdleCheck sets how long a pooled connection may idle before it is
// pinged, and returns what puts the default back.
func SetIdleCheck(d time.Duration) (restore func()) {
	old := idleCheck
	idleCheck = d
	return func() { idleCheck = old }
}
