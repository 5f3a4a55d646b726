package drivermgr

import (
	"os"
	"path/filepath"
)

const libraryExt = ".dll"

// userDir is %LOCALAPPDATA%\ADBC\Drivers. (The registry keys the ADBC spec
// also names, HKCU and HKLM\SOFTWARE\ADBC\Drivers, are not read yet.)
func userDir() string {
	if d := os.Getenv("LOCALAPPDATA"); d != "" {
		return filepath.Join(d, "ADBC", "Drivers")
	}
	return ""
}

func systemDir() string { return "" }

// systemLibrary is the name the system's loader is given for a driver
// named without path or extension: <name>.dll.
func systemLibrary(name string) string { return name + libraryExt }
