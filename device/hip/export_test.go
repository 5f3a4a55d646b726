package hip

import "github.com/purearrow/cdevice/internal/testkit/gpurttest"

// Runtime is what internal/gpurt's shared tests need to know of HIP; its
// test double is the CUDA one with HIP's names (testdata/c/fakehip.c).
var Runtime = gpurttest.Runtime{Table: &table, Backend: Backend, Real: Backend, Fake: "fakehip", OldFake: "fakehip_old",
	Version: "runtime 6.1.40092, driver 6.2.41133", OldDriver: 50221153, OldVersion: "runtime 6.1.40092, driver 5.2.21153",
	NewFake: "fakehip_new", NoHostFake: "fakehip_nohost", PropSize: 1472, NoLegacyHandle: true}

func HIPVersion(v int32) string { return formatVersion(int(v)) }
