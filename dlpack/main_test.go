package dlpack_test

import (
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything exported or imported is still
// held when all tests are done: cdevice.LiveLeaks() (testsupport.Main)
// counts DLPack tensors exported and not deleted, and imported and not
// given back, with the rest.
func TestMain(m *testing.M) {
	testsupport.Main(m)
}
