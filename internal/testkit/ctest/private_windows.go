//go:build windows

package ctest

import (
	"errors"
	"os"
)

// userTag names this user's folder; on Windows the cache and temporary
// folders are the user's own already (%LOCALAPPDATA%, %TEMP%).
func userTag() string { return "user" }

// private checks that dir is a folder, not a link to one; its access is
// the user profile's.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a folder (a link?)")
	}
	return nil
}
