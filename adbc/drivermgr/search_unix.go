//go:build unix && !darwin

package drivermgr

import (
	"os"
	"path/filepath"
)

const libraryExt = ".so"

// The user's manifests and profiles are in userConfigDir's drivers and
// profiles.
const driversDir, profilesDir = "drivers", "profiles"

// userConfigDir is $XDG_CONFIG_HOME/adbc, or ~/.config/adbc.
func userConfigDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "adbc")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "adbc")
	}
	return ""
}

// userPlaces are where the user's drivers are: the user's manifests.
func userPlaces() []place { return userManifestDir() }

// systemPlaces are where the system's drivers are: its manifests.
func systemPlaces() []place { return []place{manifestDir("/etc/adbc/drivers")} }

// systemLibrary is the name the system's loader is given for a driver
// named without path or extension: lib<name>.so, unless name has that
// prefix already.
func systemLibrary(name string) string {
	if len(name) < 3 || name[:3] != "lib" {
		name = "lib" + name
	}
	return name + libraryExt
}
