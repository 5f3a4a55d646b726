//go:build unix && !darwin

package drivermgr

import (
	"os"
	"path/filepath"
)

const libraryExt = ".so"

// userDir is $XDG_CONFIG_HOME/adbc/drivers, or ~/.config/adbc/drivers.
func userDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "adbc", "drivers")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "adbc", "drivers")
	}
	return ""
}

func systemDir() string { return "/etc/adbc/drivers" }

// systemLibrary is the name the system's loader is given for a driver
// named without path or extension: lib<name>.so, unless name has that
// prefix already.
func systemLibrary(name string) string {
	if len(name) < 3 || name[:3] != "lib" {
		name = "lib" + name
	}
	return name + libraryExt
}
