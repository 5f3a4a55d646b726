package regular

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is wrapped by the error of a path that names something
// other than a regular file (after symbolic links): a FIFO, a device, a
// socket, a directory.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file. Its open does not
// wait on a FIFO (open_*.go, per platform); anything but a regular file is
// an error wrapping ErrNotRegular, and one that is not there wraps
// fs.ErrNotExist.
func Open(path string) (*os.File, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check is Open's check for a path that another opener opens (the dynamic
// loader): nil for a regular file; a path that is not there is left to
// that opener.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return notRegular(path, fi)
}

func notRegular(path string, fi os.FileInfo) error {
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
}
