package dlpack_test

import (
	"fmt"
	"testing"

	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/testsupport"
)

// TestMain fails the test binary if anything exported or imported is still
// held when all tests are done: cdevice's counters (testsupport.Main) and
// this package's (tensors exported and not deleted, tensors imported and
// not given back).
func TestMain(m *testing.M) {
	testsupport.Main(m, func() string {
		if s := dlpack.Stats(); s.Exports != 0 || s.Imports != 0 {
			return fmt.Sprintf("dlpack exports=%d imports=%d", s.Exports, s.Imports)
		}
		return ""
	})
}
