package drivermgr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/sys/windows/registry"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/internal/ffi"
)

const libraryExt = ".dll"

const driversDir, profilesDir = "Drivers", "Profiles"

// userConfigDir is %LOCALAPPDATA%\ADBC ("" where the variable is not an
// absolute path).
func userConfigDir() string { return ffi.EnvDir("LOCALAPPDATA", "ADBC") }

// userPlaces are where the user's drivers are, as the ADBC spec orders
// them on Windows: HKEY_CURRENT_USER\SOFTWARE\ADBC\Drivers\NAME, then the
// manifests of %LOCALAPPDATA%\ADBC\Drivers.
func userPlaces() []place {
	return append([]place{registryDrivers{registry.CURRENT_USER, "HKEY_CURRENT_USER"}}, userManifestDir()...)
}

// systemPlaces are where the system's drivers are:
// HKEY_LOCAL_MACHINE\SOFTWARE\ADBC\Drivers\NAME.
func systemPlaces() []place {
	return []place{registryDrivers{registry.LOCAL_MACHINE, "HKEY_LOCAL_MACHINE"}}
}

// registryDrivers is a registry hive's SOFTWARE\ADBC\Drivers: a key per
// driver, whose string values name its library ("driver") and entry point
// ("entrypoint"), as a manifest's [Driver] does.
type registryDrivers struct {
	root registry.Key
	name string
}

const registryDriversPath = `SOFTWARE\ADBC\Drivers`

func (r registryDrivers) String() string { return r.name + `\` + registryDriversPath }

func (r registryDrivers) drivers() []string {
	k, err := registry.OpenKey(r.root, registryDriversPath, registry.ENUMERATE_SUB_KEYS)
	if err != nil {
		return nil
	}
	defer k.Close()
	names, _ := k.ReadSubKeyNames(-1)
	return names
}

func (r registryDrivers) lookup(name, entrypoint string) (*driver, bool, error) {
	k, err := registry.OpenKey(r.root, registryDriversPath+`\`+name, registry.QUERY_VALUE)
	if err != nil {
		return nil, false, nil
	}
	defer k.Close()
	where := r.String() + `\` + name
	lib, err := registryString(k, "driver")
	switch {
	case err == nil && lib == "":
		err = errors.New("empty")
	case err == nil:
		err = registryLibrary(lib)
	}
	if err != nil {
		return nil, true, loadErr(adbc.StatusInvalidArgument, err, `registry key %s: its "driver" value, the library to load: %v`, where, err)
	}
	if e, err := registryString(k, "entrypoint"); err == nil && e != "" {
		entrypoint = e
	}
	d, err := open(lib, entrypoint)
	if err != nil {
		return nil, true, within("registry key "+where+": ", err)
	}
	return d, true, nil
}

// registryString is a string value of k: a REG_SZ as it is, a
// REG_EXPAND_SZ with its %VARIABLES% expanded, but only when every one of
// them is set (ExpandEnvironmentStrings leaves an unset one as it is,
// which would make "%EVILDIR%\x.dll" a path relative to the current
// directory).
func registryString(k registry.Key, name string) (string, error) {
	s, typ, err := k.GetStringValue(name)
	if err != nil || typ != registry.EXPAND_SZ {
		return s, err
	}
	for _, v := range envReference.FindAllStringSubmatch(s, -1) {
		if os.Getenv(v[1]) == "" {
			return "", fmt.Errorf("%q (REG_EXPAND_SZ) names %%%s%%, which is not set", s, v[1])
		}
	}
	return registry.ExpandString(s)
}

// envReference is a %VARIABLE% in a REG_EXPAND_SZ value.
var envReference = regexp.MustCompile(`%([^%]+)%`)

// registryLibrary refuses a "driver" value that is a relative path with a
// folder: the registry names a library by absolute path, or by file name
// alone (searched for as a driver named so), never against the current
// directory of whichever program reads it.
func registryLibrary(lib string) error {
	if filepath.IsAbs(lib) || filepath.Base(lib) == lib && filepath.VolumeName(lib) == "" {
		return nil
	}
	return fmt.Errorf("%q is a relative path: it would be read from the current directory", lib)
}

// systemLibrary is the name the system's loader is given for a driver
// named without path or extension: <name>.dll.
func systemLibrary(name string) string { return name + libraryExt }
