package regular

import "os"

// open checks path before opening it: Windows has no FIFO in the file
// system, but a device name (CON, \\.\PhysicalDrive0) opens as a file.
func open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	return os.Open(path)
}
