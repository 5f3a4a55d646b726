//go:build !windows

package ctest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// userTag names this user's folder: the user id.
func userTag() string { return strconv.Itoa(os.Getuid()) }

// private checks that dir is a folder (not a link to one) of this user's
// that no one else may write to.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return errors.New("not a folder (a link?)")
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("it belongs to user %d, not to this user (%d)", st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("others may write to it (mode %v)", fi.Mode().Perm())
	}
	return nil
}
