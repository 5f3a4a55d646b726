package cdevice_test

import (
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything exported or imported across
// the C boundary is still held when all tests are done (testsupport.Main).
func TestMain(m *testing.M) { testsupport.Main(m) }
