package ctest

import (
	"fmt"
	"os"
	"path/filepath"
)

// cacheDir is the folder the libraries are built into and reused from:
// the user's cache folder (or, without one, the temporary folder) with a
// folder of this user's own in it, made with mode 0700 and checked to be
// the user's and writable by nobody else (private_*.go). A shared
// /tmp/cdevice-ctest, as it once was, let another user put a library there
// that a later test run would load.
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(base) {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "cdevice-ctest-"+userTag())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := private(dir); err != nil {
		return "", fmt.Errorf("ctest: %s cannot hold the test libraries: %w", dir, err)
	}
	return dir, nil
}
