package cuda

import (
	"github.com/purearrow/cdevice/internal/gpurt"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
)

// Runtime is what internal/gpurt's shared tests need to know of CUDA.
var Runtime = gpurttest.Runtime{Table: &table, Backend: Backend, Real: gpurt.NewBackend(true, table.Source(platformCandidates)),
	Fake: "fakecudart", OldFake: "fakecudart_old",
	Version: "runtime 12.8, driver 12.9", OldDriver: 11080, OldVersion: "runtime 12.8, driver 11.8",
	NewFake: "fakecudart_new", PropSize: 1032}

// Driver is the same for the driver API, whose double is
// testdata/c/fakecuda.c.
var Driver = gpurttest.Runtime{Table: &driverTable, Backend: Backend, Real: gpurt.NewBackend(true, driverTable.Source(driverCandidates)),
	Fake: "fakecuda", Version: "driver API 12.9"}

// APIs are the runtime and the driver API, for tests that run on both.
var APIs = []gpurttest.Runtime{Runtime, Driver}

// Candidates is the library search list.
func Candidates() []string {
	c, _ := table.Search(platformCandidates)()
	return c
}

// DriverCandidates is the driver library search list.
func DriverCandidates() []string {
	c, _ := driverTable.Search(driverCandidates)()
	return c
}
