package drivermgr_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows/registry"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// Drivers registered in the Windows registry (driver_manifests.rst, on
// Windows): HKEY_CURRENT_USER\SOFTWARE\ADBC\Drivers\NAME, searched before
// the manifests of %LOCALAPPDATA%\ADBC\Drivers (load flag SearchUser), and
// HKEY_LOCAL_MACHINE's (SearchSystem). Each test registers the C double
// under a name of its own and removes it after.

// regDriver registers values under root's SOFTWARE\ADBC\Drivers\<a new
// name> and returns the name; skips where root cannot be written (HKLM
// without administrator rights).
func regDriver(t *testing.T, root registry.Key, values map[string]string) string {
	t.Helper()
	name := fmt.Sprintf("cdevice_test_%d", time.Now().UnixNano())
	path := `SOFTWARE\ADBC\Drivers\` + name
	k, _, err := registry.CreateKey(root, path, registry.ALL_ACCESS)
	if errors.Is(err, registry.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		t.Skipf("cannot write %s (%v): needs administrator rights", path, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { registry.DeleteKey(root, path) })
	defer k.Close()
	for n, v := range values {
		set := k.SetStringValue
		if strings.Contains(v, "%") {
			set = k.SetExpandStringValue
		}
		if err := set(n, v); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// regEnv points the user's manifest directory at a new, empty one, and
// returns it.
func regEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("LOCALAPPDATA", dir)
	t.Setenv("ADBC_DRIVER_PATH", "")
	return filepath.Join(dir, "ADBC", "Drivers")
}

func regOpen(t *testing.T, opts map[string]string) error {
	t.Helper()
	db, err := drivermgr.Driver{}.NewDatabase(opts)
	if err == nil {
		return db.Close()
	}
	return err
}

func TestRegistryUser(t *testing.T) {
	d := newDouble(t)
	regEnv(t)
	name := regDriver(t, registry.CURRENT_USER, map[string]string{"driver": d.path, "name": "the double", "version": "1.0"})
	if err := regOpen(t, map[string]string{"driver": name}); err != nil {
		t.Fatal(err)
	}
	if e := d.entry(); e != "AdbcDriverInit" {
		t.Errorf("entry point %s, want AdbcDriverInit (the default)", e)
	}
}

func TestRegistryEntrypointAndExpand(t *testing.T) {
	d := newDouble(t)
	regEnv(t)
	t.Setenv("CDEVICE_TEST_DOUBLE_DIR", filepath.Dir(d.path))
	name := regDriver(t, registry.CURRENT_USER, map[string]string{
		"driver":     `%CDEVICE_TEST_DOUBLE_DIR%\` + filepath.Base(d.path),
		"entrypoint": "AdbcDriverDoubleInit",
	})
	// The key's entry point wins over the option's, as a manifest's does.
	if err := regOpen(t, map[string]string{"driver": name, "entrypoint": "NoSuchInit"}); err != nil {
		t.Fatal(err)
	}
	if e := d.entry(); e != "AdbcDriverDoubleInit" {
		t.Errorf("entry point %s, want the key's AdbcDriverDoubleInit", e)
	}
}

// HKCU comes before %LOCALAPPDATA%\ADBC\Drivers; a key whose library is
// missing is passed over for the next place, as a manifest's is.
func TestRegistryOrder(t *testing.T) {
	d := newDouble(t)
	dir := regEnv(t)
	name := regDriver(t, registry.CURRENT_USER, map[string]string{"driver": d.path})
	manifest := func(name, lib string) {
		body := "manifest_version = 1\n[Driver]\nentrypoint = 'AdbcDriverDoubleInit'\nshared = " + strconv.Quote(lib) + "\n"
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest(name, d.path)
	if err := regOpen(t, map[string]string{"driver": name}); err != nil {
		t.Fatal(err)
	}
	if e := d.entry(); e != "AdbcDriverInit" {
		t.Errorf("entry point %s: the manifest was used before the registry key", e)
	}

	missing := regDriver(t, registry.CURRENT_USER, map[string]string{"driver": filepath.Join(t.TempDir(), "nosuch.dll")})
	manifest(missing, d.path)
	if err := regOpen(t, map[string]string{"driver": missing}); err != nil {
		t.Fatalf("a key naming a missing library is not passed over: %v", err)
	}
	if e := d.entry(); e != "AdbcDriverDoubleInit" {
		t.Errorf("entry point %s, want the manifest's", e)
	}
}

func TestRegistryErrors(t *testing.T) {
	d := newDouble(t)
	regEnv(t)
	novalue := regDriver(t, registry.CURRENT_USER, map[string]string{"name": "no driver value"})
	err := regOpen(t, map[string]string{"driver": novalue})
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument || !strings.Contains(err.Error(), `HKEY_CURRENT_USER\SOFTWARE\ADBC\Drivers\`+novalue) ||
		!errors.Is(err, drivermgr.ErrLoad) {
		t.Errorf("a key without a driver value: %v", err)
	}

	// Without LoadFlagsSearchUser, HKCU is not searched.
	name := regDriver(t, registry.CURRENT_USER, map[string]string{"driver": d.path})
	flags := strconv.Itoa(drivermgr.LoadFlagsDefault &^ drivermgr.LoadFlagsSearchUser)
	err = regOpen(t, map[string]string{"driver": name, drivermgr.LoadFlagsOptionKey: flags})
	if !errors.Is(err, adbcerr.NotFound) {
		t.Errorf("HKCU searched without LoadFlagsSearchUser: %v", err)
	}
}

func TestRegistryMachine(t *testing.T) {
	d := newDouble(t)
	regEnv(t)
	name := regDriver(t, registry.LOCAL_MACHINE, map[string]string{"driver": d.path})
	if err := regOpen(t, map[string]string{"driver": name}); err != nil {
		t.Fatal(err)
	}
	flags := strconv.Itoa(drivermgr.LoadFlagsDefault &^ drivermgr.LoadFlagsSearchSystem)
	if err := regOpen(t, map[string]string{"driver": name, drivermgr.LoadFlagsOptionKey: flags}); !errors.Is(err, adbcerr.NotFound) {
		t.Errorf("HKLM searched without LoadFlagsSearchSystem: %v", err)
	}
}

// A REG_EXPAND_SZ value is expanded only when every variable it names is
// set: unset, "%X%\\lib.dll" would stay a path relative to the current
// directory, where a planted DLL waits (it must not load). A relative path
// is refused as a REG_SZ too.
func TestRegistryValuesNeverRelative(t *testing.T) {
	regEnv(t)
	marks := t.TempDir()
	t.Setenv(ctest.PlantedMarks, marks)
	here := t.TempDir()
	ctest.Plant(t, filepath.Join(here, "%CDEVICE_UNSET_DIR%"), "planted.dll")
	ctest.Plant(t, filepath.Join(here, "sub"), "planted.dll")
	t.Setenv("CDEVICE_UNSET_DIR", "")
	unset := regDriver(t, registry.CURRENT_USER, map[string]string{"driver": `%CDEVICE_UNSET_DIR%\planted.dll`})
	relative := regDriver(t, registry.CURRENT_USER, map[string]string{"driver": `sub\planted.dll`})
	t.Chdir(here)
	for name, want := range map[string]string{unset: "%CDEVICE_UNSET_DIR%, which is not set", relative: "relative path"} {
		err := regOpen(t, map[string]string{"driver": name})
		var ae adbc.Error
		if !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want InvalidArgument saying %q", name, err, want)
		}
	}
	if got := ctest.Loaded(t, marks); len(got) > 0 {
		t.Errorf("loaded from the current directory: %v", got)
	}
}
