package drivermgr

import "github.com/purearrow/cdevice/internal/ffi"

const libraryExt = ".dylib"

const driversDir, profilesDir = "Drivers", "Profiles"

// userConfigDir is ~/Library/Application Support/ADBC ("" where $HOME is
// not an absolute path).
func userConfigDir() string { return ffi.EnvDir("HOME", "Library", "Application Support", "ADBC") }

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
