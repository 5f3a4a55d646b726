//go:build unix && !darwin

package drivermgr

import "github.com/purearrow/cdevice/internal/ffi"

const libraryExt = ".so"

// The user's manifests and profiles are in userConfigDir's drivers and
// profiles.
const driversDir, profilesDir = "drivers", "profiles"

// userConfigDir is $XDG_CONFIG_HOME/adbc, or ~/.config/adbc ("" where
// neither variable is an absolute path: the XDG spec ignores a relative
// one, and neither may resolve against the current directory).
func userConfigDir() string {
	if d := ffi.EnvDir("XDG_CONFIG_HOME", "adbc"); d != "" {
		return d
	}
	return ffi.EnvDir("HOME", ".config", "adbc")
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
