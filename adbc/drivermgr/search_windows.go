package drivermgr

import (
	"os"
	"path/filepath"
)

const libraryExt = ".dll"

const driversDir, profilesDir = "Drivers", "Profiles"

// userConfigDir is %LOCALAPPDATA%\ADBC. (The registry keys the ADBC spec
// also names, HKCU and HKLM\SOFTWARE\ADBC\Drivers, are not read yet.)
func userConfigDir() string {
	if d := os.Getenv("LOCALAPPDATA"); d != "" {
		return filepath.Join(d, "ADBC")
	}
	return ""
}

func systemDir() string { return "" }

// systemLibrary is the name the system's loader is given for a driver
// named without path or extension: <name>.dll.
func systemLibrary(name string) string { return name + libraryExt }
