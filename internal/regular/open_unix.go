//go:build unix

package regular

import (
	"os"

	"golang.org/x/sys/unix"
)

// open opens path non-blocking, so that a FIFO without a writer is opened
// at once (and then refused) rather than waited on; for a regular file the
// flag changes nothing.
func open(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
