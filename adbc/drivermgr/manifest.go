package drivermgr

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/internal/regular"
)

// A manifest is a driver manifest (TOML, the ADBC spec's
// driver_manifests): the library to load, per platform or for all, and
// the entry point.
type manifest struct {
	ManifestVersion int64  `toml:"manifest_version"`
	Name            string `toml:"name"`
	Version         string `toml:"version"`
	ADBC            struct {
		Version string `toml:"version"`
	} `toml:"ADBC"`
	Driver struct {
		Entrypoint string `toml:"entrypoint"`
		// Shared is a path, or a table of paths keyed by platform tuple
		// (linux_amd64...).
		Shared any `toml:"shared"`
	} `toml:"Driver"`
}

// maxTOML bounds what is read of a manifest or a profile.
const maxTOML = 1 << 20

// readTOML decodes the TOML file at path (what, "manifest" or "profile",
// names it in errors) into v, reading at most maxTOML bytes of it; a path
// that names a pipe or a device is refused without waiting on it.
func readTOML(what, path string, v any) (toml.MetaData, error) {
	f, err := regular.Open(path)
	if err != nil {
		st := adbc.StatusInvalidArgument
		if errors.Is(err, os.ErrNotExist) {
			st = adbc.StatusNotFound
		}
		return toml.MetaData{}, loadErr(st, err, "%s %s: %v", what, path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTOML+1))
	f.Close()
	if err != nil {
		return toml.MetaData{}, loadErr(adbc.StatusInvalidArgument, err, "%s %s: %v", what, path, err)
	}
	if len(data) > maxTOML {
		return toml.MetaData{}, loadErr(adbc.StatusInvalidArgument, nil, "%s %s: more than %d bytes, more than a %s has", what, path, maxTOML, what)
	}
	if err := tomlNesting(string(data)); err != nil {
		return toml.MetaData{}, loadErr(adbc.StatusInvalidArgument, err, "%s %s: %v", what, path, err)
	}
	md, err := toml.Decode(string(data), v)
	if err != nil {
		return md, loadErr(adbc.StatusInvalidArgument, err, "%s %s: %v", what, path, err)
	}
	return md, nil
}

// readManifest reads and checks the manifest at path.
func readManifest(path string) (*manifest, error) {
	var m manifest
	md, err := readTOML("manifest", path, &m)
	if err != nil {
		return nil, err
	}
	if md.IsDefined("manifest_version") && m.ManifestVersion != 1 {
		return nil, loadErr(adbc.StatusInvalidArgument, nil, "manifest %s: manifest_version %d; this driver manager reads version 1", path, m.ManifestVersion)
	}
	return &m, nil
}

// library is the manifest's library for this platform, relative paths
// taken from the manifest's directory.
func (m *manifest) library(path string) (string, error) {
	var lib string
	switch s := m.Driver.Shared.(type) {
	case nil:
		return "", loadErr(adbc.StatusInvalidArgument, nil, "manifest %s has no [Driver] shared: the library to load", path)
	case string:
		lib = s
	case map[string]any:
		tuple := platformTuple()
		v, ok := s[tuple]
		if !ok {
			return "", loadErr(adbc.StatusNotFound, nil, "manifest %s has no library for %s (it has %s)", path, tuple, keys(s))
		}
		if lib, ok = v.(string); !ok {
			return "", loadErr(adbc.StatusInvalidArgument, nil, "manifest %s: [Driver.shared] %s is a %T, not a path", path, tuple, v)
		}
	default:
		return "", loadErr(adbc.StatusInvalidArgument, nil, "manifest %s: [Driver] shared is a %T, not a path or a table of paths", path, s)
	}
	if lib == "" {
		return "", loadErr(adbc.StatusInvalidArgument, nil, "manifest %s: an empty library path", path)
	}
	if !filepath.IsAbs(lib) && isPath(lib) {
		lib = filepath.Join(filepath.Dir(path), lib)
	}
	return lib, nil
}

// keys lists a table's keys, for an error.
func keys(m map[string]any) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// platformTuple is this platform as manifests name it: <os>_<arch>, with
// macos for darwin and x86 for 386.
func platformTuple() string {
	os := runtime.GOOS
	if os == "darwin" {
		os = "macos"
	}
	arch := runtime.GOARCH
	switch arch {
	case "386":
		arch = "x86"
	case "ppc64":
		arch = "powerpc64"
	case "ppc64le":
		arch = "powerpc64le"
	}
	return fmt.Sprintf("%s_%s", os, arch)
}
