package drivermgr

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-adbc/go/adbc"
)

// Connection profiles, as the ADBC spec (connection_profiles.rst) and
// Arrow's C driver manager of release 24 read them: a TOML file
//
//	profile_version = 1
//	driver = "postgresql"        # optional
//	[Options]
//	uri = "postgresql://app:{{ env_var(PGPASSWORD) }}@db/app"
//	adbc.postgresql.batch_size_hint_bytes = 1048576
//
// chosen by the "profile" option, a "profile://NAME" uri, or a
// "profile://NAME" driver.
const (
	// OptionProfile names a connection profile: a path to a .toml file,
	// or a name searched for as NAME.toml.
	OptionProfile = "profile"
	// OptionAdditionalProfileSearchPaths lists more directories to search
	// for profiles (os.PathListSeparator between them), first.
	OptionAdditionalProfileSearchPaths = "additional_profile_search_path_list"

	profileScheme = "profile://"
)

// A profile is a connection profile read: the driver it names (or "") and
// its options by type, their values not yet interpolated.
type profile struct {
	path    string
	driver  string
	strs    map[string]string
	ints    map[string]int64
	doubles map[string]float64
}

// findProfile finds and reads the profile name names: a .toml path as
// given, an absolute path with .toml added, else NAME.toml in the profile
// search directories, the first found (one that is there but does not
// read stops the search).
func findProfile(name string, extra []string) (*profile, error) {
	if filepath.Ext(name) == ".toml" {
		return readProfile(name)
	}
	if filepath.IsAbs(name) {
		return readProfile(name + ".toml")
	}
	dirs := profileDirs(extra)
	for _, dir := range dirs {
		p := filepath.Join(dir, name+".toml")
		if _, err := os.Stat(p); err == nil {
			return readProfile(p)
		}
	}
	where := "no search directory"
	if len(dirs) > 0 {
		where = strings.Join(dirs, ", ")
	}
	// "Profile not found: NAME" as Arrow's C manager says it, for programs
	// that look for its words.
	return nil, loadErr(adbc.StatusNotFound, nil, "Profile not found: %s (no %s.toml in %s; set %q, %s or %q)",
		name, name, where, OptionAdditionalProfileSearchPaths, "ADBC_PROFILE_PATH", OptionProfile)
}

// readProfile reads and checks the profile at path.
func readProfile(path string) (*profile, error) {
	var doc map[string]any
	if _, err := readTOML("profile", path, &doc); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return loadErr(adbc.StatusInvalidArgument, nil, "profile %s: %s", path, fmt.Sprintf(format, args...))
	}
	switch v := doc["profile_version"].(type) {
	case int64:
		if v != 1 {
			return nil, bad("profile_version %d; this driver manager reads version 1", v)
		}
	case nil:
		return nil, bad("no profile_version (this driver manager reads version 1)")
	default:
		return nil, bad("profile_version is a %s, not an integer", tomlType(v))
	}
	p := &profile{path: path, strs: map[string]string{}, ints: map[string]int64{}, doubles: map[string]float64{}}
	switch d := doc["driver"].(type) {
	case string:
		p.driver = d
	case nil:
	default:
		return nil, bad("driver is a %s, not a string", tomlType(d))
	}
	opts, ok := doc["Options"].(map[string]any)
	if !ok {
		if doc["Options"] == nil {
			return nil, bad("no [Options] table")
		}
		return nil, bad("Options is a %s, not a table", tomlType(doc["Options"]))
	}
	if err := p.flatten("", opts); err != nil {
		return nil, bad("%v", err)
	}
	return p, nil
}

// flatten adds a table's options, a nested table's keys joined to its own
// by dots (a dotted TOML key is nested tables): strings and booleans
// ("true", "false") as string options, integers and floats as int and
// double options.
func (p *profile) flatten(prefix string, t map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(t)) {
		key := prefix + k
		switch v := t[k].(type) {
		case string:
			p.strs[key] = v
		case bool:
			p.strs[key] = fmt.Sprint(v)
		case int64:
			p.ints[key] = v
		case float64:
			p.doubles[key] = v
		case map[string]any:
			if err := p.flatten(key+".", v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("option %s is a %s: an option is a string, an integer, a float or a boolean", key, tomlType(v))
		}
	}
	return nil
}

// tomlType names a decoded TOML value's type.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "float"
	case map[string]any:
		return "table"
	case []any, []map[string]any:
		return "array"
	}
	return "date or time"
}

// interpolation is one {{ ... }} in a profile's string value.
var interpolation = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// errInterpolation is what interpolate returns for a {{ }} it cannot read.
var errInterpolation = errors.New("{{ }} holds something other than env_var(NAME), or expands too far")

// maxInterpolated bounds what interpolation adds to one profile's values
// in all: a 1 MiB profile naming a 7 KB variable 55,000 times made a
// gigabyte.
const maxInterpolated = 16 << 20

// interpolate replaces each {{ env_var(NAME) }} in a profile's string value
// with the environment variable NAME ("" where it is unset), adding at most
// *left bytes in all (what it adds is taken from *left).
func interpolate(key, value string, left *int) (string, error) {
	var err error
	out := interpolation.ReplaceAllStringFunc(value, func(m string) string {
		if err != nil {
			return ""
		}
		// The match's group: what is between the braces, less the
		// whitespace the pattern's \s* take.
		body := strings.Trim(m[2:len(m)-2], " \t\n\f\r")
		name, ok := strings.CutPrefix(body, "env_var(")
		if ok {
			name, ok = strings.CutSuffix(name, ")")
		}
		if !ok || name == "" {
			if err == nil {
				err = fmt.Errorf("option %s: %w: %q", key, errInterpolation, m)
			}
			return m
		}
		v := os.Getenv(name)
		if *left -= len(v); *left < 0 {
			err = fmt.Errorf("option %s: %w: more than %d bytes from the environment in all", key, errInterpolation, maxInterpolated)
			return ""
		}
		return v
	})
	return out, err
}
