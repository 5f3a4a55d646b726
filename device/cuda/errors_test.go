package cuda_test

import (
	"testing"

	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestErrorPaths drives the backend, devices, streams and events into
// every failure on the C test double (bad arguments, use after Close,
// injected runtime faults, a canceled probe, a deadline) and checks that
// each error wraps its path's documented sentinel.
func TestErrorPaths(t *testing.T) {
	var cases []testsupport.ErrorCase
	for _, rt := range cuda.APIs {
		for _, p := range gpurttest.ErrorPaths(rt) {
			cases = append(cases, testsupport.Case(rt.Table.API.String()+"/"+p.Name, p.Want, p.Call))
		}
	}
	testsupport.RunErrorCases(t, cases)
}
