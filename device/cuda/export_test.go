package cuda

import "github.com/purearrow/cdevice/internal/gpurt/gpurttest"

// Runtime is what internal/gpurt's shared tests need to know of CUDA.
var Runtime = gpurttest.Runtime{Table: &table, Backend: Backend, Fake: "fakecudart", OldFake: "fakecudart_old",
	Version: "runtime 12.8, driver 12.9", OldDriver: 11080, OldVersion: "runtime 12.8, driver 11.8",
	NewFake: "fakecudart_new"}

// Candidates is the library search list.
func Candidates() []string {
	c, _ := table.Search(platformCandidates)()
	return c
}
