package drivermgr_test

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// The driver option resolved as the ADBC spec (driver_manifests.rst) says,
// case by case, by drivermgr and by Arrow's own C driver manager
// (libadbc_driver_manager.so of release 24, loaded through internal/ffi)
// for the same options and the same files: every case builds its own
// directories and manifests, pointing at Arrow's real SQLite driver.

// mfAnswer is what one driver manager made of a case: success, or a status
// and a message.
type mfAnswer struct {
	status adbc.Status // StatusOK: the database initialized
	msg    string
}

func (a mfAnswer) String() string {
	if a.status == adbc.StatusOK {
		return "OK"
	}
	return a.status.String() + ": " + mfOneLine(a.msg)
}

func mfOneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", ` \n `)
	s = strings.ReplaceAll(s, "\t", "")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// mfEnv is one case's world: a temporary root with the directories and
// files the case makes, an environment with no search directory of the
// host's in it, and what the case's error must name.
type mfEnv struct {
	t      *testing.T
	root   string
	sqlite string   // Arrow's SQLite driver, an absolute path
	names  []string // what our error message must contain
}

// dir makes root/rel and returns it.
func (e *mfEnv) dir(rel string) string {
	e.t.Helper()
	d := filepath.Join(e.root, rel)
	if err := os.MkdirAll(d, 0o755); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// file writes body to root/rel and returns its path.
func (e *mfEnv) file(rel, body string) string {
	e.t.Helper()
	p := filepath.Join(e.root, rel)
	e.dir(filepath.Dir(rel))
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// link makes root/rel a symbolic link to target and returns its path.
func (e *mfEnv) link(rel, target string) string {
	e.t.Helper()
	p := filepath.Join(e.root, rel)
	e.dir(filepath.Dir(rel))
	if err := os.Symlink(target, p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// mfGood is a valid manifest naming lib; entry, when not empty, is its
// entry point.
func mfGood(lib, entry string) string {
	s := "manifest_version = 1\nname = 'SQLite (test)'\nversion = '1.12.0'\n\n[ADBC]\nversion = '1.1.0'\n\n[Driver]\n"
	if entry != "" {
		s += "entrypoint = " + strconv.Quote(entry) + "\n"
	}
	return s + "shared = " + strconv.Quote(lib) + "\n"
}

// manifest writes a valid manifest naming the SQLite driver to root/rel.
func (e *mfEnv) manifest(rel string) string { return e.file(rel, mfGood(e.sqlite, "")) }

// bad writes a manifest that is not valid TOML to root/rel.
func (e *mfEnv) bad(rel string) string { return e.file(rel, "[Driver\nshared = 'x'\n") }

// mention adds what our error message must contain.
func (e *mfEnv) mention(s ...string) { e.names = append(e.names, s...) }

// setenv sets an environment variable for the case; Go's os.Setenv
// reaches the C library's environment (purego's fakecgo, or cgo), so the C
// driver manager's getenv sees it too.
func (e *mfEnv) setenv(k, v string) { e.t.Setenv(k, v) }

// shim compiles root/rel: a driver library whose only entry point is
// entry, which forwards to the SQLite driver's AdbcDriverSqliteInit. It
// tells the entry point the managers derive from a library's file name.
func (e *mfEnv) shim(rel, entry string) string {
	e.t.Helper()
	cc, err := osexec.LookPath("gcc")
	testsupport.Need(e.t, "gcc, to build a driver whose only entry point is a derived one", err)
	src := e.file("shim/"+entry+".c", `#include <dlfcn.h>
#include <stdint.h>
typedef uint8_t (*init_fn)(int, void*, void*);
uint8_t `+entry+`(int version, void* driver, void* error) {
  void* h = dlopen(`+strconv.Quote(e.sqlite)+`, RTLD_NOW | RTLD_LOCAL);
  if (!h) return 9; /* ADBC_STATUS_INTERNAL */
  init_fn f = (init_fn)dlsym(h, "AdbcDriverSqliteInit");
  if (!f) return 9;
  return f(version, driver, error);
}
`)
	out := filepath.Join(e.root, rel)
	e.dir(filepath.Dir(rel))
	if b, err := osexec.Command(cc, "-shared", "-fPIC", "-o", out, src, "-ldl").CombinedOutput(); err != nil {
		e.t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// mfFlags returns a pointer to f, a case's load flags.
func mfFlags(f int) *int { return &f }

// The C driver manager's load flags (adbc_driver_manager.h) are ours.
const (
	mfFEnv      = drivermgr.LoadFlagsSearchEnv
	mfFUser     = drivermgr.LoadFlagsSearchUser
	mfFSystem   = drivermgr.LoadFlagsSearchSystem
	mfFRelative = drivermgr.LoadFlagsAllowRelativePaths
	mfFDefault  = drivermgr.LoadFlagsDefault
)

// A manifestCase is one input to both driver managers.
type manifestCase struct {
	name string
	// build makes the case's files and environment and returns its options
	// (the load flags apart).
	build func(e *mfEnv) map[string]string
	// flags, when not nil, are the load flags: our "load_flags" option, and
	// AdbcDriverManagerDatabaseSetLoadFlags for the C manager. Without
	// them, each manager has its own default: ours LoadFlagsDefault (as
	// arrow-adbc's Go drivermgr), the C manager's only
	// ADBC_LOAD_FLAG_ALLOW_RELATIVE_PATHS.
	flags *int
	// want is our answer's status (StatusOK: success); rule says where
	// it follows the spec or the C manager on a point once got wrong.
	want adbc.Status
	rule string

	// The C manager gives the same answer, unless one of these says why
	// not.
	//
	// differ: we deliberately differ, and cWant is the C manager's status.
	differ string
	cWant  adbc.Status
	// cAnyStatus: the C manager's status says nothing here; only success
	// or failure is compared.
	cAnyStatus string
	// cSkip: the C manager cannot be given this case.
	cSkip string
	// driverErr: the failure is the driver's own, not the loader's (no
	// ErrLoad).
	driverErr bool

	// observe, when not nil, reads what a manager's answer did besides its
	// status (a file the driver made, say) and undoes it; it runs after
	// each manager's answer, and the two must read the same (unless the
	// case differs).
	observe func(e *mfEnv) string
}

// mfSQLiteURI is a URI the SQLite driver accepts with its own scheme (it
// strips "sqlite://", sqlite.cc's kUriWrapperPrefix).
const mfSQLiteURI = "sqlite://:memory:"

var manifestCases = []manifestCase{
	// ---- a library by path
	{
		name:  "library by absolute path",
		build: func(e *mfEnv) map[string]string { return map[string]string{"driver": e.sqlite} },
	},
	{
		name: "library by file name, found by the system loader (its soname, loaded)",
		build: func(e *mfEnv) map[string]string {
			// dlopen finds a library named without a directory among those
			// loaded, by soname: the SQLite driver's is
			// libadbc_driver_sqlite.so.112.
			l, err := ffi.Open(e.sqlite)
			if err != nil {
				e.t.Fatal(err)
			}
			e.t.Cleanup(func() { l.Close() })
			return map[string]string{"driver": "libadbc_driver_sqlite.so.112"}
		},
	},
	{
		name: "library by absolute path through a symbolic link",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.link("lib/libadbc_driver_sqlite.so", e.sqlite)}
		},
	},
	{
		name: "path without extension: the .toml is found first",
		build: func(e *mfEnv) map[string]string {
			e.manifest("d/mt.toml")
			e.file("d/mt.so", "not a library: the manifest must win")
			return map[string]string{"driver": filepath.Join(e.root, "d", "mt")}
		},
	},
	{
		name: "path without extension: no .toml, then the .so",
		build: func(e *mfEnv) map[string]string {
			p := e.link("d/libadbc_driver_sqlite.so", e.sqlite)
			return map[string]string{"driver": strings.TrimSuffix(p, ".so")}
		},
		// The spec: "If there's no extension provided, it will first look
		// for a file with a .toml extension, and if that fails, it will
		// look for the extension appropriate to the platform". The C
		// manager dlopens the path as given, then "lib" + the whole path +
		// ".so" (lib/tmp/.../libadbc_driver_sqlite.so), so it never finds it.
		differ: "C manager prefixes lib to the whole absolute path",
		cWant:  adbc.StatusNotFound,
	},
	{
		name: "path without extension: the library itself",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.link("d/sqlitedrv", e.sqlite)}
		},
		rule: "a path without extension that is a file is opened as given (after its .toml, before its .so), as the C manager's dlopen of the path",
	},
	{
		name: "path without extension: bad .toml beside a good .so",
		build: func(e *mfEnv) map[string]string {
			m := e.bad("d/libadbc_driver_sqlite.toml")
			p := e.link("d/libadbc_driver_sqlite.so", e.sqlite)
			e.mention(m)
			return map[string]string{"driver": strings.TrimSuffix(p, ".so")}
		},
		want: adbc.StatusInvalidArgument,
		// The C manager ignores a bad manifest here (and then fails to find
		// the library, as above); we report the manifest.
		differ: "C manager ignores the bad manifest and looks for the library",
		cWant:  adbc.StatusNotFound,
	},
	{
		name: "library by path that does not exist",
		build: func(e *mfEnv) map[string]string {
			p := filepath.Join(e.root, "nowhere", "libadbc_driver_nosuch.so")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "a file that is not a shared library",
		build: func(e *mfEnv) map[string]string {
			p := e.file("d/libnotalib.so", "this is text, not ELF\n")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want:       adbc.StatusInternal,
		cAnyStatus: "the C manager answers NOT_FOUND for every dlopen failure",
	},
	{
		name: "a shared library that is not an ADBC driver",
		build: func(e *mfEnv) map[string]string {
			p := mfLibm()
			e.mention(p, "AdbcDriverInit")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInternal,
	},

	// ---- a manifest by path
	{
		name: "manifest by absolute path",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.manifest("m/sqlite-test.toml")}
		},
	},
	{
		name: "manifest by path that does not exist",
		build: func(e *mfEnv) map[string]string {
			p := filepath.Join(e.root, "m", "nosuch.toml")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want:       adbc.StatusNotFound,
		cAnyStatus: "the C manager cannot tell a missing manifest from bad TOML (INVALID_ARGUMENT for both; its own comment says so)",
	},
	{
		name: "manifest naming its library relative to the manifest",
		build: func(e *mfEnv) map[string]string {
			e.link("m/lib/libadbc_driver_sqlite.so", e.sqlite)
			return map[string]string{"driver": e.file("m/rel.toml", mfGood("lib/libadbc_driver_sqlite.so", ""))}
		},
		// The C (and Rust) managers dlopen the manifest's relative path as
		// it is, from the working directory; we take it from the manifest's
		// directory (manifest.go), so a manifest can sit beside its library.
		differ: "relative library paths are taken from the manifest's directory",
		cWant:  adbc.StatusNotFound,
	},

	// ---- bad manifests (by path)
	{
		name: "invalid TOML",
		build: func(e *mfEnv) map[string]string {
			p := e.bad("m/bad.toml")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "no [Driver] shared",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/noshared.toml", "manifest_version = 1\nname = 'x'\n[Driver]\nentrypoint = 'AdbcDriverInit'\n")
			e.mention(p, "shared")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "no [Driver] table at all",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/nodriver.toml", "manifest_version = 1\nname = 'x'\n")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "[Driver.shared] without this platform's key",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/otherplatforms.toml", "[Driver.shared]\nmacos_arm64 = '/x/libd.dylib'\nwindows_amd64 = 'C:\\\\x\\\\d.dll'\nlinux_arm64 = "+strconv.Quote(e.sqlite)+"\n")
			e.mention(p, "linux_amd64")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "[Driver.shared] with this platform's key",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.file("m/platforms.toml", "[Driver.shared]\nmacos_arm64 = '/x/libd.dylib'\nlinux_amd64 = "+strconv.Quote(e.sqlite)+"\n")}
		},
	},
	{
		name: "[Driver.shared] linux_amd64 not a string",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/platformint.toml", "[Driver.shared]\nlinux_amd64 = 42\n")
			e.mention(p, "linux_amd64")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "shared pointing at a missing file",
		build: func(e *mfEnv) map[string]string {
			lib := filepath.Join(e.root, "gone", "libadbc_driver_gone.so")
			e.mention(lib)
			return map[string]string{"driver": e.file("m/missing.toml", mfGood(lib, ""))}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "shared pointing at a file that is not a library",
		build: func(e *mfEnv) map[string]string {
			lib := e.file("m/libtext.so", "text\n")
			e.mention(lib)
			return map[string]string{"driver": e.file("m/text.toml", mfGood(lib, ""))}
		},
		want:       adbc.StatusInternal,
		cAnyStatus: "the C manager answers NOT_FOUND for every dlopen failure",
	},
	{
		name: "shared an empty string",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/emptyshared.toml", "[Driver]\nshared = ''\n")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "shared of the wrong type (integer)",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/sharedint.toml", "[Driver]\nshared = 42\n")
			e.mention(p, "shared")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "shared of the wrong type (array)",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/sharedarray.toml", "[Driver]\nshared = ["+strconv.Quote(e.sqlite)+"]\n")
			e.mention(p, "shared")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "entrypoint of the wrong type",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/entryint.toml", "[Driver]\nentrypoint = 5\nshared = "+strconv.Quote(e.sqlite)+"\n")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "manifest_version = 2",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/v2.toml", "manifest_version = 2\n"+strings.TrimPrefix(mfGood(e.sqlite, ""), "manifest_version = 1\n"))
			e.mention(p, "2")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "manifest_version = 0",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/v0.toml", "manifest_version = 0\n"+strings.TrimPrefix(mfGood(e.sqlite, ""), "manifest_version = 1\n"))
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
		rule: "the spec: manifest_version \"if present, it must be set to 1\"; the C and Rust managers refuse any other value",
	},
	{
		name: "manifest_version a string",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/vstring.toml", "manifest_version = '1'\n"+strings.TrimPrefix(mfGood(e.sqlite, ""), "manifest_version = 1\n"))
			e.mention(p, "manifest_version")
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
		// The C manager reads manifest_version with value_or(1), so a value of
		// the wrong type counts as absent (1); Rust's does the same. We refuse
		// a manifest whose keys have the wrong types.
		differ: "we refuse a manifest_version that is not an integer",
		cWant:  adbc.StatusOK,
	},
	{
		name: "an empty file",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/empty.toml", "")
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "a huge file (2 MiB of comments, then a valid manifest)",
		build: func(e *mfEnv) map[string]string {
			var b strings.Builder
			for b.Len() < 2<<20 {
				b.WriteString("# padding padding padding padding padding padding padding padding\n")
			}
			b.WriteString(mfGood(e.sqlite, ""))
			p := e.file("m/huge.toml", b.String())
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
		// manifest.go bounds a manifest at 1 MiB; the C manager parses any
		// size.
		differ: "we refuse manifests over 1 MiB (maxTOML)",
		cWant:  adbc.StatusOK,
	},
	{
		name: "a huge invalid file (2 MiB, not TOML)",
		build: func(e *mfEnv) map[string]string {
			p := e.file("m/hugebad.toml", strings.Repeat("[[[[ not toml\n", 2<<20/13))
			e.mention(p)
			return map[string]string{"driver": p}
		},
		want: adbc.StatusInvalidArgument,
	},

	// ---- a manifest by bare name, through the search directories
	{
		name: "ADBC_DRIVER_PATH, several dirs, found in the second",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env2/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1")+":"+e.dir("env2"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "ADBC_DRIVER_PATH, several dirs, the first wins",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/mt.toml")
			e.bad("env2/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1")+":"+e.dir("env2"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "ADBC_DRIVER_PATH, several dirs, a bad first one stops the search",
		build: func(e *mfEnv) map[string]string {
			e.mention(e.bad("env1/mt.toml"))
			e.manifest("env2/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1")+":"+e.dir("env2"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "ADBC_DRIVER_PATH with empty entries",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", "::"+e.dir("env1")+":")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "ADBC_DRIVER_PATH without load flags",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"driver": "mt"}
		},
		// Our default load flags are LoadFlagsDefault (as arrow-adbc's Go
		// drivermgr); the C manager's default is ALLOW_RELATIVE_PATHS alone
		// (TempDatabase::load_flags), so it searches no directory.
		differ: "our default load flags search the directories; C's do not",
		cWant:  adbc.StatusNotFound,
	},
	{
		name: "ADBC_DRIVER_PATH, a manifest without this platform's key, then a good one",
		build: func(e *mfEnv) map[string]string {
			e.file("env1/mt.toml", "[Driver.shared]\nmacos_arm64 = '/x/libd.dylib'\n")
			e.manifest("env2/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1")+":"+e.dir("env2"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
		rule:  "a manifest in a search directory with no library for this platform (NOT_FOUND) does not end the search (the C manager's SearchPathsForDriver, Rust's search_path_list)",
	},
	{
		name: "ADBC_DRIVER_PATH, a manifest whose library is missing, then a good one in the user dir",
		build: func(e *mfEnv) map[string]string {
			e.file("env1/mt.toml", mfGood(filepath.Join(e.root, "gone", "libgone.so"), ""))
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			e.manifest("xdg/adbc/drivers/mt.toml")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
		rule:  "a manifest in a search directory whose library is not there (NOT_FOUND) does not end the search (the C manager goes on to the user and system dirs, as Rust's)",
	},
	{
		name: "additional_manifest_search_path_list, several dirs",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add2/mt.toml")
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1") + ":" + e.dir("add2")}
		},
	},
	{
		name: "additional_manifest_search_path_list, the first wins",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/mt.toml")
			e.bad("add2/mt.toml")
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1") + ":" + e.dir("add2")}
		},
	},
	{
		name: "additional_manifest_search_path_list with load flags 0",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/mt.toml")
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		flags: mfFlags(0),
	},
	{
		name: "$CONDA_PREFIX/etc/adbc/drivers",
		build: func(e *mfEnv) map[string]string {
			e.manifest("conda/etc/adbc/drivers/mt.toml")
			e.setenv("CONDA_PREFIX", e.dir("conda"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
		// The spec searches $CONDA_PREFIX "if the driver manager was built or
		// installed with conda"; Arrow's build here is not (its error says
		// "not enabled at build time: Conda prefix"). Ours always does, with
		// LoadFlagsSearchEnv.
		differ: "we search $CONDA_PREFIX; this C build does not (not a conda build)",
		cWant:  adbc.StatusNotFound,
	},
	{
		name: "$CONDA_PREFIX without LoadFlagsSearchEnv",
		build: func(e *mfEnv) map[string]string {
			e.manifest("conda/etc/adbc/drivers/mt.toml")
			e.setenv("CONDA_PREFIX", e.dir("conda"))
			e.mention("mt")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFUser | mfFSystem | mfFRelative),
		want:  adbc.StatusNotFound,
	},
	{
		name: "user dir $XDG_CONFIG_HOME/adbc/drivers",
		build: func(e *mfEnv) map[string]string {
			e.manifest("xdg/adbc/drivers/mt.toml")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "user dir ~/.config/adbc/drivers, XDG_CONFIG_HOME unset",
		build: func(e *mfEnv) map[string]string {
			e.manifest("home/.config/adbc/drivers/mt.toml")
			e.setenv("XDG_CONFIG_HOME", "")
			os.Unsetenv("XDG_CONFIG_HOME")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "user dir with LoadFlagsSearchUser only",
		build: func(e *mfEnv) map[string]string {
			e.manifest("xdg/adbc/drivers/mt.toml")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFUser),
	},
	{
		name: "user dir without LoadFlagsSearchUser",
		build: func(e *mfEnv) map[string]string {
			e.manifest("xdg/adbc/drivers/mt.toml")
			e.mention("mt")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFEnv | mfFSystem | mfFRelative),
		want:  adbc.StatusNotFound,
	},
	{
		name: "bad manifest in the user dir",
		build: func(e *mfEnv) map[string]string {
			e.mention(e.bad("xdg/adbc/drivers/mt.toml"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "load flags 0: neither ADBC_DRIVER_PATH nor the user dir",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/mt.toml")
			e.manifest("xdg/adbc/drivers/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			e.mention("mt")
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(0),
		want:  adbc.StatusNotFound,
	},

	// ---- precedence: ADBC_DRIVER_PATH, additional paths, conda, user dir
	{
		name: "precedence: ADBC_DRIVER_PATH over the additional paths",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/mt.toml")
			e.bad("add1/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "precedence: ADBC_DRIVER_PATH over the additional paths (its bad manifest is the answer)",
		build: func(e *mfEnv) map[string]string {
			e.mention(e.bad("env1/mt.toml"))
			e.manifest("add1/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "precedence: the additional paths over the user dir",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/mt.toml")
			e.bad("xdg/adbc/drivers/mt.toml")
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "precedence: the additional paths over the user dir (its bad manifest is the answer)",
		build: func(e *mfEnv) map[string]string {
			e.mention(e.bad("add1/mt.toml"))
			e.manifest("xdg/adbc/drivers/mt.toml")
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "precedence: ADBC_DRIVER_PATH over the user dir",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/mt.toml")
			e.bad("xdg/adbc/drivers/mt.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"driver": "mt"}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "precedence: the additional paths over $CONDA_PREFIX",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/mt.toml")
			e.bad("conda/etc/adbc/drivers/mt.toml")
			e.setenv("CONDA_PREFIX", e.dir("conda"))
			return map[string]string{"driver": "mt", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "precedence: $CONDA_PREFIX over the user dir",
		build: func(e *mfEnv) map[string]string {
			e.mention(e.bad("conda/etc/adbc/drivers/mt.toml"))
			e.manifest("xdg/adbc/drivers/mt.toml")
			e.setenv("CONDA_PREFIX", e.dir("conda"))
			return map[string]string{"driver": "mt"}
		},
		flags:  mfFlags(mfFDefault),
		want:   adbc.StatusInvalidArgument,
		differ: "this C build does not search $CONDA_PREFIX, so it finds the user dir's manifest",
		cWant:  adbc.StatusOK,
	},

	// ---- relative paths and LoadFlagsAllowRelativePaths (the working
	// directory is the case's root)
	{
		name: "relative manifest path, relative paths allowed",
		build: func(e *mfEnv) map[string]string {
			e.manifest("rel/mt.toml")
			e.t.Chdir(e.root)
			return map[string]string{"driver": filepath.Join("rel", "mt.toml")}
		},
		flags: mfFlags(mfFRelative),
	},
	{
		name: "relative manifest path, load flags 0",
		build: func(e *mfEnv) map[string]string {
			e.manifest("rel/mt.toml")
			e.t.Chdir(e.root)
			e.mention(filepath.Join("rel", "mt.toml"))
			return map[string]string{"driver": filepath.Join("rel", "mt.toml")}
		},
		flags: mfFlags(0),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "relative manifest path with ./, load flags without AllowRelativePaths",
		build: func(e *mfEnv) map[string]string {
			e.manifest("mt.toml")
			e.t.Chdir(e.root)
			e.mention("./mt.toml")
			return map[string]string{"driver": "./mt.toml"}
		},
		flags: mfFlags(mfFEnv | mfFUser | mfFSystem),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "relative library path, relative paths allowed",
		build: func(e *mfEnv) map[string]string {
			e.link("rel/libadbc_driver_sqlite.so", e.sqlite)
			e.t.Chdir(e.root)
			return map[string]string{"driver": "./rel/libadbc_driver_sqlite.so"}
		},
		flags: mfFlags(mfFRelative),
	},
	{
		name: "relative library path, load flags 0",
		build: func(e *mfEnv) map[string]string {
			e.link("rel/libadbc_driver_sqlite.so", e.sqlite)
			e.t.Chdir(e.root)
			e.mention("rel/libadbc_driver_sqlite.so")
			return map[string]string{"driver": "rel/libadbc_driver_sqlite.so"}
		},
		flags: mfFlags(0),
		want:  adbc.StatusInvalidArgument,
	},
	{
		name: "relative manifest path by default flags",
		build: func(e *mfEnv) map[string]string {
			e.manifest("rel/mt.toml")
			e.t.Chdir(e.root)
			return map[string]string{"driver": filepath.Join("rel", "mt.toml")}
		},
	},
	{
		name: "relative path without extension, relative paths allowed",
		build: func(e *mfEnv) map[string]string {
			e.manifest("rel/mt.toml")
			e.t.Chdir(e.root)
			return map[string]string{"driver": filepath.Join("rel", "mt")}
		},
		flags: mfFlags(mfFRelative),
		// The spec's flowchart sends a name with no extension that is not
		// absolute to the manifest search (rel/mt.toml under each search
		// dir), then dlopen; the C manager does that, and finds nothing.
		// We take a name with a directory part as a path (its .toml, then
		// its .so), as the spec's text says of a path without extension.
		differ: "a relative path without extension is a path to us, a name to search for to the C manager",
		cWant:  adbc.StatusNotFound,
	},
	{
		name: "relative path without extension, load flags 0",
		build: func(e *mfEnv) map[string]string {
			e.manifest("rel/mt.toml")
			e.t.Chdir(e.root)
			e.mention(filepath.Join("rel", "mt"))
			return map[string]string{"driver": filepath.Join("rel", "mt")}
		},
		flags:      mfFlags(0),
		want:       adbc.StatusInvalidArgument,
		cAnyStatus: "the C manager searches rel/mt as a name (no dirs with flags 0) and answers NOT_FOUND; we refuse the relative path",
	},
	{
		name: "bare manifest file name in the working directory",
		build: func(e *mfEnv) map[string]string {
			e.manifest("mt.toml")
			e.t.Chdir(e.root)
			return map[string]string{"driver": "mt.toml"}
		},
		flags: mfFlags(mfFDefault),
		rule:  "\"mt.toml\" has an extension, so the spec's flowchart takes it as a (relative) path: with LoadFlagsAllowRelativePaths the C and Rust managers load ./mt.toml",
	},
	{
		name: "bare library file name, load flags 0",
		build: func(e *mfEnv) map[string]string {
			e.mention("libadbc_driver_nosuch.so")
			return map[string]string{"driver": "libadbc_driver_nosuch.so"}
		},
		flags: mfFlags(0),
		want:  adbc.StatusNotFound,
		// The C manager takes every name with an extension as a relative
		// path, refused without ALLOW_RELATIVE_PATHS; we give a file name
		// without a directory to the system's loader (LD_LIBRARY_PATH...),
		// which never reads the working directory.
		differ: "a bare library file name is the system loader's, not a relative path",
		cWant:  adbc.StatusInvalidArgument,
	},
	{
		name: "invalid load_flags value",
		build: func(e *mfEnv) map[string]string {
			e.mention("abc")
			return map[string]string{"driver": e.sqlite, drivermgr.LoadFlagsOptionKey: "abc"}
		},
		want:  adbc.StatusInvalidArgument,
		cSkip: "the C manager takes load flags through AdbcDriverManagerDatabaseSetLoadFlags, not an option",
	},
	{
		name: "negative load_flags value",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.sqlite, drivermgr.LoadFlagsOptionKey: "-1"}
		},
		want:  adbc.StatusInvalidArgument,
		cSkip: "the C manager takes load flags through AdbcDriverManagerDatabaseSetLoadFlags, not an option",
	},

	// ---- the driver from the uri option's scheme
	{
		name: "uri scheme names a manifest in ADBC_DRIVER_PATH",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/sqlite.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"uri": mfSQLiteURI}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "uri scheme names a manifest in the additional paths",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/sqlite.toml")
			return map[string]string{"uri": mfSQLiteURI, drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
	},
	{
		name: "uri scheme names a manifest in the user dir",
		build: func(e *mfEnv) map[string]string {
			e.manifest("xdg/adbc/drivers/sqlite.toml")
			return map[string]string{"uri": mfSQLiteURI}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "uri scheme names nothing that exists",
		build: func(e *mfEnv) map[string]string {
			e.mention("nosuchdb")
			return map[string]string{"uri": "nosuchdb://host/db"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusNotFound,
	},
	{
		name: "driver option wins over the uri scheme",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.sqlite, "uri": mfSQLiteURI}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "driver option as a URI: its scheme names the driver, and it is the uri",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/sqlite.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"driver": mfSQLiteURI}
		},
		flags: mfFlags(mfFDefault),
		rule:  "a driver option of the scheme://rest form names its driver by the scheme and is passed as the uri (InternalAdbcParseOptions)",
	},
	{
		name: "driver option as a URI naming nothing that exists",
		build: func(e *mfEnv) map[string]string {
			e.mention("nosuchdb")
			return map[string]string{"driver": "nosuchdb://host/db"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusNotFound,
	},
	{
		name: "uri without a driver or a scheme",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"uri": ":memory:"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusInvalidArgument,
		rule:  "a uri whose first colon has nothing before it names no driver (InternalAdbcParseDriverUri)",
	},
	{
		name: "uri without a colon",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"uri": "nosuch.db"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusNotFound,
		rule:  "a uri with no colon at all, and no driver, is the driver's name (here a library file name that is not there)",
	},
	{
		name: "uri in the driver:uri form (sqlite:file::memory:)",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/sqlite.toml")
			return map[string]string{"uri": "sqlite:file::memory:", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
		rule: "\"driver:rest\" names the driver before the first colon and passes rest as the uri",
	},
	{
		name: "driver in the driver:uri form (sqlite:file::memory:)",
		build: func(e *mfEnv) map[string]string {
			e.manifest("add1/sqlite.toml")
			return map[string]string{"driver": "sqlite:file::memory:", drivermgr.OptionAdditionalSearchPaths: e.dir("add1")}
		},
	},
	{
		name: "driver in the driver:uri form, the driver a library path",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.sqlite + ":file::memory:"}
		},
	},
	// ---- entry points
	{
		name: "entrypoint from the manifest",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.file("m/entry.toml", mfGood(e.sqlite, "AdbcDriverSqliteInit"))}
		},
	},
	{
		name: "entrypoint from the manifest that the library lacks",
		build: func(e *mfEnv) map[string]string {
			e.mention("NoSuchDriverInit")
			return map[string]string{"driver": e.file("m/noentry.toml", mfGood(e.sqlite, "NoSuchDriverInit"))}
		},
		want: adbc.StatusInternal,
	},
	{
		name: "entrypoint from the option",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.sqlite, "entrypoint": "AdbcDriverSqliteInit"}
		},
	},
	{
		name: "entrypoint from the option that the library lacks",
		build: func(e *mfEnv) map[string]string {
			// Arrow's C manager's words too, which programs look for.
			e.mention("NoSuchDriverInit", e.sqlite, "dlsym(NoSuchDriverInit) failed", "undefined symbol: NoSuchDriverInit")
			return map[string]string{"driver": e.sqlite, "entrypoint": "NoSuchDriverInit"}
		},
		want: adbc.StatusInternal,
	},
	{
		name: "entrypoint in both: the manifest's wins (a bad option)",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.file("m/entry.toml", mfGood(e.sqlite, "AdbcDriverSqliteInit")), "entrypoint": "NoSuchDriverInit"}
		},
		rule: "the manifest's entry point takes precedence over the entrypoint option (the C manager's LoadDriverManifest; Rust's resolve_entrypoint)",
	},
	{
		name: "entrypoint in both: the manifest's wins (a bad manifest entry)",
		build: func(e *mfEnv) map[string]string {
			e.mention("NoSuchDriverInit")
			return map[string]string{"driver": e.file("m/noentry.toml", mfGood(e.sqlite, "NoSuchDriverInit")), "entrypoint": "AdbcDriverSqliteInit"}
		},
		want: adbc.StatusInternal,
		rule: "as above: the manifest's entry point wins over the option's",
	},
	{
		name: "entrypoint option with a manifest that names none",
		build: func(e *mfEnv) map[string]string {
			e.mention("NoSuchDriverInit")
			return map[string]string{"driver": e.manifest("m/sqlite.toml"), "entrypoint": "NoSuchDriverInit"}
		},
		want: adbc.StatusInternal,
		// The C manager's LoadDriverManifest sets the entry point to the
		// manifest's even when it names none, dropping the option; Rust's
		// manager (resolve_entrypoint) and we use the option then.
		differ: "the C manager drops the entrypoint option when a manifest names none",
		cWant:  adbc.StatusOK,
	},
	{
		name: "default entry point derived: libadbc_driver_shim.so has only AdbcDriverShimInit",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.shim("lib/libadbc_driver_shim.so", "AdbcDriverShimInit")}
		},
	},
	{
		name: "default entry point derived: adbc-driver-shim.so (hyphens)",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.shim("lib/adbc-driver-shim.so", "AdbcDriverShimInit")}
		},
	},
	{
		name: "default entry point derived: libadbc_driver_shim.so.1.2.3 (versioned)",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.shim("lib/libadbc_driver_shim.so.1.2.3", "AdbcDriverShimInit")}
		},
	},
	{
		name: "default entry point derived: proprietary_thing.so has AdbcProprietaryThingInit",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.shim("lib/proprietary_thing.so", "AdbcProprietaryThingInit")}
		},
	},
	{
		name: "default entry point derived from the manifest's library",
		build: func(e *mfEnv) map[string]string {
			lib := e.shim("lib/libadbc_driver_shim.so", "AdbcDriverShimInit")
			return map[string]string{"driver": e.file("m/shim.toml", mfGood(lib, ""))}
		},
	},
	{
		name: "no derived entry point and no AdbcDriverInit: libshim.so has only AdbcDriverShimInit",
		build: func(e *mfEnv) map[string]string {
			lib := e.shim("lib/libshim.so", "AdbcDriverShimInit")
			e.mention(lib, "AdbcShimInit", "AdbcDriverInit")
			return map[string]string{"driver": lib}
		},
		want: adbc.StatusInternal,
	},
	{
		name: "entrypoint option for a library whose name derives another",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": e.shim("lib/libshim.so", "AdbcDriverShimInit"), "entrypoint": "AdbcDriverShimInit"}
		},
	},

	// ---- bare names that find nothing, and "profile"
	{
		name: "a missing library by bare name",
		build: func(e *mfEnv) map[string]string {
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			e.mention("nosuchdriver", e.dir("env1"), filepath.Join(e.root, "xdg", "adbc", "drivers"))
			return map[string]string{"driver": "nosuchdriver"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusNotFound,
		rule:  "the error of a bare name found nowhere names the directories searched for its manifest, as the C manager's does",
	},
	{
		name: "a missing library by bare name, default flags",
		build: func(e *mfEnv) map[string]string {
			e.mention("nosuchdriver")
			return map[string]string{"driver": "nosuchdriver"}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "empty driver option",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"driver": ""}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "\"profile\" as a driver name, nothing named so",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile")
			return map[string]string{"driver": "profile"}
		},
		flags: mfFlags(mfFDefault),
		want:  adbc.StatusNotFound,
		// Searched as any other name (libprofile.so), by both managers.
	},
	{
		name: "\"profile\" as a driver name, with a profile.toml driver manifest",
		build: func(e *mfEnv) map[string]string {
			e.manifest("env1/profile.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("env1"))
			return map[string]string{"driver": "profile"}
		},
		flags: mfFlags(mfFDefault),
		// Both load it: the spec says a manifest "must not be named
		// profile.toml", but neither manager refuses one that is.
	},
}

// mfLibm is a shared library that is not an ADBC driver.
func mfLibm() string {
	for _, p := range []string{"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "/lib/x86_64-linux-gnu/libm.so.6"
}

// newMfEnv makes a case's root and an environment that searches none of
// the host's directories: HOME and XDG_CONFIG_HOME under the root,
// ADBC_DRIVER_PATH, CONDA_PREFIX and ADBC_PROFILE_PATH unset.
func newMfEnv(t *testing.T) *mfEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &mfEnv{t: t, root: root, sqlite: sharedADBC(t, "libadbc_driver_sqlite.so")}
	e.setenv("HOME", e.dir("home"))
	e.setenv("XDG_CONFIG_HOME", e.dir("xdg"))
	for _, k := range []string{"ADBC_DRIVER_PATH", "CONDA_PREFIX", "ADBC_PROFILE_PATH"} {
		e.setenv(k, "")
		os.Unsetenv(k)
	}
	return e
}

// mfNeedLinuxAMD64 skips where Arrow's build in ../shared/adbc (linux/amd64)
// cannot load, and where manifests' platform key is not linux_amd64.
func mfNeedLinuxAMD64(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("Arrow's drivers in ../shared/adbc are linux/amd64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
}

// mfOurs is drivermgr's answer and error for opts (with the load flags as
// its option).
func mfOurs(opts map[string]string, fl *int) (mfAnswer, error) {
	o := map[string]string{}
	for k, v := range opts {
		o[k] = v
	}
	if fl != nil {
		o[drivermgr.LoadFlagsOptionKey] = strconv.Itoa(*fl)
	}
	db, err := drivermgr.Driver{}.NewDatabase(o)
	if err != nil {
		var ae adbc.Error
		if !errors.As(err, &ae) {
			return mfAnswer{status: adbc.StatusUnknown, msg: err.Error()}, err
		}
		return mfAnswer{status: ae.Code, msg: ae.Msg}, err
	}
	if err := db.Close(); err != nil {
		return mfAnswer{status: adbc.StatusUnknown, msg: "Close: " + err.Error()}, err
	}
	return mfAnswer{}, nil
}

// mfCManager is Arrow's C driver manager's database functions.
type mfCManager struct {
	lib                                          *ffi.Library
	newDB, setOption, setLoadFlags, initDB, free uintptr
}

var (
	mfCManagerOnce sync.Once
	mfCManagerVal  *mfCManager
	mfCManagerErr  error
)

// mfLoadCManager loads libadbc_driver_manager.so once per test binary (the
// C manager never unloads the drivers it loads anyway).
func mfLoadCManager(t *testing.T) *mfCManager {
	t.Helper()
	path := sharedADBC(t, "libadbc_driver_manager.so")
	mfCManagerOnce.Do(func() {
		lib, err := ffi.Open(path)
		if err != nil {
			mfCManagerErr = err
			return
		}
		m := &mfCManager{lib: lib}
		for _, s := range []struct {
			name string
			p    *uintptr
		}{
			{"AdbcDatabaseNew", &m.newDB},
			{"AdbcDatabaseSetOption", &m.setOption},
			{"AdbcDriverManagerDatabaseSetLoadFlags", &m.setLoadFlags},
			{"AdbcDatabaseInit", &m.initDB},
			{"AdbcDatabaseRelease", &m.free},
		} {
			if *s.p, err = lib.Symbol(s.name); err != nil {
				mfCManagerErr = err
				return
			}
		}
		mfCManagerVal = m
	})
	if mfCManagerErr != nil {
		t.Fatalf("Arrow's C driver manager: %v", mfCManagerErr)
	}
	return mfCManagerVal
}

// answer runs the case's options through the C manager: AdbcDatabaseNew,
// AdbcDriverManagerDatabaseSetLoadFlags (when the case sets flags),
// AdbcDatabaseSetOption for each option, AdbcDatabaseInit, then
// AdbcDatabaseRelease.
func (m *mfCManager) answer(t *testing.T, opts map[string]string, fl *int) mfAnswer {
	t.Helper()
	var mem []unsafe.Pointer
	alloc := func(n uintptr) uintptr {
		p, err := ffi.Calloc(n)
		if err != nil {
			t.Fatal(err)
		}
		mem = append(mem, p)
		return uintptr(p)
	}
	cstr := func(s string) uintptr {
		p, err := ffi.CString(s)
		if err != nil {
			t.Fatal(err)
		}
		mem = append(mem, p)
		return uintptr(p)
	}
	defer func() {
		for _, p := range mem {
			ffi.Free(p)
		}
	}()
	db := alloc(unsafe.Sizeof(cabi.Handle{}))
	errp := alloc(unsafe.Sizeof(cabi.Error{}))
	e := (*cabi.Error)(abi.Pointer(errp))
	// take reads and releases the AdbcError.
	take := func() string {
		msg := ffi.GoString(e.Message)
		if e.Release != 0 {
			ffi.Call(e.Release, errp)
		}
		*e = cabi.Error{}
		return msg
	}
	status := func(r uintptr) adbc.Status { return adbc.Status(uint8(r)) } // AdbcStatusCode is uint8_t

	if st := status(ffi.Call(m.newDB, db, errp)); st != adbc.StatusOK {
		t.Fatalf("C AdbcDatabaseNew: %v %s", st, take())
	}
	// driverFailed: the driver's own DatabaseInit failed, after which the
	// C manager has released the driver's database, and its
	// AdbcDatabaseRelease answers InvalidState.
	driverFailed := false
	defer func() {
		if st := status(ffi.Call(m.free, db, errp)); st != adbc.StatusOK && !(driverFailed && st == adbc.StatusInvalidState) {
			t.Errorf("C AdbcDatabaseRelease: %v %s", st, take())
		}
		take()
	}()
	if fl != nil {
		if st := status(ffi.Call(m.setLoadFlags, db, uintptr(uint32(*fl)), errp)); st != adbc.StatusOK {
			return mfAnswer{status: st, msg: "SetLoadFlags: " + take()}
		}
	}
	for _, k := range slices.Sorted(mfKeys(opts)) {
		if st := status(ffi.Call(m.setOption, db, cstr(k), cstr(opts[k]), errp)); st != adbc.StatusOK {
			return mfAnswer{status: st, msg: "SetOption " + k + ": " + take()}
		}
	}
	if st := status(ffi.Call(m.initDB, db, errp)); st != adbc.StatusOK {
		msg := take()
		driverFailed = !strings.HasPrefix(msg, "[Driver Manager]")
		return mfAnswer{status: st, msg: msg}
	}
	take()
	return mfAnswer{}
}

func mfKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestManifest runs every case through drivermgr and through Arrow's C
// driver manager, and compares the answers: the same success or failure,
// the same status (unless cAnyStatus says why not), unless the case says
// how and why we deliberately differ; and our error names the files and
// directories involved. -v logs both answers of every case.
func TestManifest(t *testing.T) { mfRun(t, manifestCases) }

// mfRun is TestManifest over cases.
func mfRun(t *testing.T, cases []manifestCase) {
	mfNeedLinuxAMD64(t)
	cm := mfLoadCManager(t)
	var rows []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newMfEnv(t)
			opts := c.build(e)

			got, _ := mfOurs(opts, c.flags)
			var saw, cSaw string
			if c.observe != nil {
				saw = c.observe(e)
			}
			var cgot mfAnswer
			cs := "n/a (" + c.cSkip + ")"
			if c.cSkip == "" {
				cgot = cm.answer(t, opts, c.flags)
				cs = cgot.status.String()
				t.Logf("C:    %v", cgot)
				if c.observe != nil {
					cSaw = c.observe(e)
					if c.differ == "" && saw != cSaw {
						t.Errorf("ours left %q, the C manager %q", saw, cSaw)
					}
				}
			}
			t.Logf("ours: %v", got)
			rows = append(rows, fmt.Sprintf("%-90s | ours: %-16v | C: %s", c.name, got.status, cs))

			bug := ""
			if c.rule != "" {
				bug = "\nrule: " + c.rule
			}
			if got.status != c.want {
				t.Errorf("ours: %v; want %v%s", got, c.want, bug)
			}
			for _, n := range e.names {
				if got.status != adbc.StatusOK && !strings.Contains(got.msg, n) {
					t.Errorf("our message does not name %q: %s%s", n, got.msg, bug)
				}
			}

			switch {
			case c.cSkip != "":
			case c.differ != "":
				if cgot.status != c.cWant {
					t.Errorf("C manager: %v; the table says %v (we differ: %s)", cgot, c.cWant, c.differ)
				}
				if c.cWant == c.want {
					t.Errorf("the case says we differ (%s), but both want %v", c.differ, c.want)
				}
			case (got.status == adbc.StatusOK) != (cgot.status == adbc.StatusOK):
				t.Errorf("ours %v, C %v: one succeeds, the other fails%s", got, cgot, bug)
			case c.cAnyStatus == "" && got.status != cgot.status:
				t.Errorf("ours %v, C %v: different statuses%s", got, cgot, bug)
			}
		})
	}
	t.Logf("the cases' answers:\n%s", strings.Join(rows, "\n"))
}

// TestManifestErrorsWrapErrLoad: every failure of the table is an
// adbc.Error (errors.As) with the case's status, and wraps ErrLoad.
func TestManifestErrorsWrapErrLoad(t *testing.T) { mfRunErrors(t, manifestCases) }

// mfRunErrors is TestManifestErrorsWrapErrLoad over cases.
func mfRunErrors(t *testing.T, cases []manifestCase) {
	mfNeedLinuxAMD64(t)
	for _, c := range cases {
		if c.want == adbc.StatusOK || c.driverErr {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			e := newMfEnv(t)
			_, err := mfOurs(c.build(e), c.flags)
			if err == nil {
				t.Fatalf("no error; want %v", c.want)
			}
			if !errors.Is(err, drivermgr.ErrLoad) {
				t.Errorf("%v does not wrap drivermgr.ErrLoad", err)
			}
			var ae adbc.Error
			if !errors.As(err, &ae) {
				t.Fatalf("%v (%T) is not an adbc.Error", err, err)
			}
			if ae.Code != c.want {
				t.Errorf("%v: status %v, want %v", err, ae.Code, c.want)
			}
			if err.Error() == "" || ae.Msg == "" {
				t.Errorf("an empty message: %q", err)
			}
		})
	}
}
