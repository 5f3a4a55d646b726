package drivermgr

import (
	"golang.org/x/sys/windows/registry"

	"github.com/purearrow/cdevice/adbc"
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

func (r registryDrivers) lookup(name, entrypoint string) (*driver, bool, error) {
	k, err := registry.OpenKey(r.root, registryDriversPath+`\`+name, registry.QUERY_VALUE)
	if err != nil {
		return nil, false, nil
	}
	defer k.Close()
	where := r.String() + `\` + name
	lib, err := registryString(k, "driver")
	if err != nil || lib == "" {
		return nil, true, loadErr(adbc.StatusInvalidArgument, err, `registry key %s has no "driver" value: the library to load`, where)
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

// registryString is a string value of k, environment variables expanded
// where it is a REG_EXPAND_SZ.
func registryString(k registry.Key, name string) (string, error) {
	s, typ, err := k.GetStringValue(name)
	if err != nil {
		return "", err
	}
	if typ == registry.EXPAND_SZ {
		return registry.ExpandString(s)
	}
	return s, nil
}

// systemLibrary is the name the system's loader is given for a driver
// named without path or extension: <name>.dll.
func systemLibrary(name string) string { return name + libraryExt }
