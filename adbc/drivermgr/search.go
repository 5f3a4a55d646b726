package drivermgr

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/purearrow/cdevice/internal/ffi"
)

// A place is where a driver named without a path is looked for: a
// directory of manifests, or (on Windows) a registry key of drivers.
type place interface {
	// lookup loads the driver called name from here, with entrypoint
	// unless the place names one; found is false where nothing here is
	// called so.
	lookup(name, entrypoint string) (d *driver, found bool, err error)
	// drivers lists the names of the drivers here.
	drivers() []string
	String() string
}

// manifestDir is a directory of manifests, NAME.toml.
type manifestDir string

func (dir manifestDir) String() string { return string(dir) }

func (dir manifestDir) drivers() []string {
	ms, _ := filepath.Glob(filepath.Join(string(dir), "*.toml"))
	var names []string
	for _, m := range ms {
		names = append(names, strings.TrimSuffix(filepath.Base(m), ".toml"))
	}
	return names
}

func (dir manifestDir) lookup(name, entrypoint string) (*driver, bool, error) {
	m := filepath.Join(string(dir), name+".toml")
	if _, err := os.Stat(m); err != nil {
		return nil, false, nil
	}
	d, err := openManifest(m, entrypoint)
	return d, true, err
}

// A listed place: a place searched, and what put it in the list.
type listed struct {
	place
	from string
}

// searchPlaces lists the places searched for a driver named without a
// path, in the ADBC spec's order, as the load flags allow:
// $ADBC_DRIVER_PATH, the caller's extra paths,
// $CONDA_PREFIX/etc/adbc/drivers, the user's, the system's.
func searchPlaces(r loadRequest) []listed {
	var out []listed
	add := func(from string, ps ...place) {
		for _, p := range ps {
			out = append(out, listed{p, from})
		}
	}
	dirs := func(ds []string) (ps []place) {
		for _, d := range ds {
			ps = append(ps, manifestDir(d))
		}
		return ps
	}
	if r.flags&LoadFlagsSearchEnv != 0 {
		add("$ADBC_DRIVER_PATH", dirs(splitList(os.Getenv("ADBC_DRIVER_PATH")))...)
	}
	add(OptionAdditionalSearchPaths, dirs(r.extraPaths)...)
	if r.flags&LoadFlagsSearchEnv != 0 {
		if d := ffi.EnvDir("CONDA_PREFIX", "etc", "adbc", "drivers"); d != "" {
			add("$CONDA_PREFIX", manifestDir(d))
		}
	}
	if r.flags&LoadFlagsSearchPath != 0 {
		add("the user's", userPlaces()...)
	}
	if r.flags&LoadFlagsSearchSystem != 0 {
		add("the system's", systemPlaces()...)
	}
	return out
}

// A SearchPlace is a place where NewDatabase looks for a driver named
// without a path: a directory of manifests (NAME.toml) or, on Windows, a
// registry key of drivers.
type SearchPlace struct {
	Place   string   // the directory or key
	From    string   // what puts it in the list: "$ADBC_DRIVER_PATH", OptionAdditionalSearchPaths, "$CONDA_PREFIX", "the user's", "the system's"
	Drivers []string // the names of the drivers there
}

// SearchPlaces lists, in the order NewDatabase searches them under opts
// (LoadFlagsOptionKey, OptionAdditionalSearchPaths), the places where a
// driver named without a path is looked for, and the drivers each holds.
// After them, the system's loader is asked for the library of the name.
func SearchPlaces(opts map[string]string) ([]SearchPlace, error) {
	q, err := newRequest(opts)
	if err != nil {
		return nil, err
	}
	var out []SearchPlace
	for _, p := range searchPlaces(q.loadRequest) {
		out = append(out, SearchPlace{Place: p.String(), From: p.from, Drivers: p.drivers()})
	}
	return out, nil
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
