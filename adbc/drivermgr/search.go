package drivermgr

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/purearrow/cdevice/internal/ffi"
)

// A place is where a driver named without a path is looked for: a
// directory of manifests, or (on Windows) a registry key of drivers.
type place interface {
	// lookup loads the driver called name from here, with entrypoint
	// unless the place names one; found is false where nothing here is
	// called so.
	lookup(name, entrypoint string) (d *driver, found bool, err error)
	String() string
}

// manifestDir is a directory of manifests, NAME.toml.
type manifestDir string

func (dir manifestDir) String() string { return string(dir) }

func (dir manifestDir) lookup(name, entrypoint string) (*driver, bool, error) {
	m := filepath.Join(string(dir), name+".toml")
	if _, err := os.Stat(m); err != nil {
		return nil, false, nil
	}
	d, err := openManifest(m, entrypoint)
	return d, true, err
}

// searchPlaces lists the places searched for a driver named without a
// path, in the ADBC spec's order, as the load flags allow:
// $ADBC_DRIVER_PATH, the caller's extra paths,
// $CONDA_PREFIX/etc/adbc/drivers, the user's, the system's.
func searchPlaces(r loadRequest) []place {
	var dirs []string
	if r.flags&LoadFlagsSearchEnv != 0 {
		dirs = append(dirs, splitList(os.Getenv("ADBC_DRIVER_PATH"))...)
	}
	dirs = append(dirs, r.extraPaths...)
	if r.flags&LoadFlagsSearchEnv != 0 {
		if d := ffi.EnvDir("CONDA_PREFIX", "etc", "adbc", "drivers"); d != "" {
			dirs = append(dirs, d)
		}
	}
	var places []place
	for _, d := range dirs {
		places = append(places, manifestDir(d))
	}
	if r.flags&LoadFlagsSearchPath != 0 {
		places = append(places, userPlaces()...)
	}
	if r.flags&LoadFlagsSearchSystem != 0 {
		places = append(places, systemPlaces()...)
	}
	return places
}

// userManifestDir is the user's directory of manifests, where there is one.
func userManifestDir() []place {
	if d := userConfigDir(); d != "" {
		return []place{manifestDir(filepath.Join(d, driversDir))}
	}
	return nil
}

// splitList splits a list of directories that the user gave
// ($ADBC_DRIVER_PATH, an option) at os.PathListSeparator, dropping empty
// ones (never read as the current directory) and making relative ones
// absolute against the current directory now: the user chose them.
func splitList(s string) []string {
	var out []string
	for _, d := range filepath.SplitList(s) {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// profileDirs lists the directories searched for a connection profile, in
// the spec's order: the caller's extra paths, $ADBC_PROFILE_PATH,
// $CONDA_PREFIX/etc/adbc/profiles, the user's. Load flags do not apply.
func profileDirs(extra []string) []string {
	dirs := append(slices.Clone(extra), splitList(os.Getenv("ADBC_PROFILE_PATH"))...)
	if d := ffi.EnvDir("CONDA_PREFIX", "etc", "adbc", "profiles"); d != "" {
		dirs = append(dirs, d)
	}
	if d := userConfigDir(); d != "" {
		dirs = append(dirs, filepath.Join(d, profilesDir))
	}
	return dirs
}
