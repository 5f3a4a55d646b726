//go:build !unix

package bench

import "time"

// processCPU is 0 where getrusage is not there: no cpu-ns/row.
func processCPU() time.Duration { return 0 }
