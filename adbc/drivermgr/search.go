package drivermgr

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// searchDirs lists the directories searched for a manifest, in the ADBC
// spec's order, as the load flags allow: $ADBC_DRIVER_PATH, the caller's
// extra paths, $CONDA_PREFIX/etc/adbc/drivers, the user's, the system's.
func searchDirs(r loadRequest) []string {
	var dirs []string
	if r.flags&LoadFlagsSearchEnv != 0 {
		dirs = append(dirs, splitList(os.Getenv("ADBC_DRIVER_PATH"))...)
	}
	dirs = append(dirs, r.extraPaths...)
	if r.flags&LoadFlagsSearchEnv != 0 {
		if p := os.Getenv("CONDA_PREFIX"); p != "" {
			dirs = append(dirs, filepath.Join(p, "etc", "adbc", "drivers"))
		}
	}
	if r.flags&LoadFlagsSearchPath != 0 {
		if d := userConfigDir(); d != "" {
			dirs = append(dirs, filepath.Join(d, driversDir))
		}
	}
	if r.flags&LoadFlagsSearchSystem != 0 {
		if d := systemDir(); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// splitList splits a list of directories at os.PathListSeparator, dropping
// empty ones.
func splitList(s string) []string {
	var out []string
	for _, d := range strings.Split(s, string(os.PathListSeparator)) {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// profileDirs lists the directories searched for a connection profile, in
// the spec's order: the caller's extra paths, $ADBC_PROFILE_PATH,
// $CONDA_PREFIX/etc/adbc/profiles, the user's. Load flags do not apply.
func profileDirs(extra []string) []string {
	dirs := append(slices.Clone(extra), splitList(os.Getenv("ADBC_PROFILE_PATH"))...)
	if p := os.Getenv("CONDA_PREFIX"); p != "" {
		dirs = append(dirs, filepath.Join(p, "etc", "adbc", "profiles"))
	}
	if d := userConfigDir(); d != "" {
		dirs = append(dirs, filepath.Join(d, profilesDir))
	}
	return dirs
}
