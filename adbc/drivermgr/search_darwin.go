package drivermgr

import (
	"os"
	"path/filepath"
)

const libraryExt = ".dylib"

const driversDir, profilesDir = "Drivers", "Profiles"

// userConfigDir is ~/Library/Application Support/ADBC.
func userConfigDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, "Library", "Application Support", "ADBC")
	}
	return ""
}

// userPlaces are where the user's drivers are: the user's manifests.
func userPlaces() []place { return userManifestDir() }

// systemPlaces are where the system's drivers are: its manifests.
func systemPlaces() []place { return []place{manifestDir("/Library/Application Support/ADBC/Drivers")} }

func systemLibrary(name string) string {
	if len(name) < 3 || name[:3] != "lib" {
		name = "lib" + name
	}
	return name + libraryExt
}
