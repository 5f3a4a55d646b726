package abi_test

import (
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything is still held across the C
// boundary when all tests are done (testsupport.Main).
func TestMain(m *testing.M) { testsupport.Main(m) }
