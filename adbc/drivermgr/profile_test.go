package drivermgr_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// Connection profiles (connection_profiles.rst), case by case through
// drivermgr and Arrow's C driver manager, as TestManifest: each case writes
// its profiles; most point the SQLite driver at a database file, whose
// creation (observe) shows which profile's options reached the driver.

// profile writes a profile to root/rel: the driver (none when ""), then
// body under [Options].
func (e *mfEnv) profile(rel, driver, body string) string {
	s := "profile_version = 1\n"
	if driver != "" {
		s += "driver = " + strconv.Quote(driver) + "\n"
	}
	return e.file(rel, s+"\n[Options]\n"+body)
}

// db is a uri option line for a SQLite database file root/name.
func (e *mfEnv) db(name string) string {
	return "uri = " + strconv.Quote("file:"+filepath.Join(e.root, name)) + "\n"
}

// pfMade observes which of the SQLite database files a case's profiles
// name were made, and removes them.
func pfMade(names ...string) func(e *mfEnv) string {
	return func(e *mfEnv) string {
		var made []string
		for _, n := range names {
			p := filepath.Join(e.root, n)
			if _, err := os.Stat(p); err == nil {
				made = append(made, n)
				os.Remove(p)
			}
		}
		return strings.Join(made, ",")
	}
}

var profileCases = []manifestCase{
	// ---- how a profile is named
	{
		name: "profile option, a name found in ADBC_PROFILE_PATH",
		build: func(e *mfEnv) map[string]string {
			e.profile("prof/p.toml", e.sqlite, e.db("p.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("prof"))
			return map[string]string{"profile": "p"}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "profile:// uri",
		build: func(e *mfEnv) map[string]string {
			e.profile("prof/p.toml", e.sqlite, e.db("p.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("prof"))
			return map[string]string{"uri": "profile://p"}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "profile:// driver",
		build: func(e *mfEnv) map[string]string {
			e.profile("prof/p.toml", e.sqlite, e.db("p.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("prof"))
			return map[string]string{"driver": "profile://p"}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "absolute path to the .toml",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("elsewhere/p.toml", e.sqlite, e.db("p.db"))}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "profile:// uri with an absolute path",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"uri": "profile://" + e.profile("elsewhere/p.toml", e.sqlite, e.db("p.db"))}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "absolute path without .toml",
		build: func(e *mfEnv) map[string]string {
			p := e.profile("elsewhere/p.toml", e.sqlite, e.db("p.db"))
			return map[string]string{"profile": strings.TrimSuffix(p, ".toml")}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "relative path to the .toml, from the working directory",
		build: func(e *mfEnv) map[string]string {
			e.profile("rel/p.toml", e.sqlite, e.db("p.db"))
			e.t.Chdir(e.root)
			return map[string]string{"profile": filepath.Join("rel", "p.toml")}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "a name with a directory part, under a search directory",
		build: func(e *mfEnv) map[string]string {
			e.profile("prof/team/p.toml", e.sqlite, e.db("p.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("prof"))
			return map[string]string{"profile": "team/p"}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "empty profile option: no profile",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": "", "driver": e.sqlite}
		},
	},

	// ---- where a name is searched, in order
	{
		name: "additional_profile_search_path_list before ADBC_PROFILE_PATH",
		build: func(e *mfEnv) map[string]string {
			e.profile("add/p.toml", e.sqlite, e.db("add.db"))
			e.profile("env/p.toml", e.sqlite, e.db("env.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("env"))
			return map[string]string{"profile": "p", drivermgr.OptionAdditionalProfileSearchPaths: e.dir("add")}
		},
		observe: pfMade("add.db", "env.db"),
	},
	{
		name: "ADBC_PROFILE_PATH, a list, in order",
		build: func(e *mfEnv) map[string]string {
			e.profile("env2/p.toml", e.sqlite, e.db("env2.db"))
			e.profile("env3/p.toml", e.sqlite, e.db("env3.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("env1")+string(os.PathListSeparator)+e.dir("env2")+string(os.PathListSeparator)+e.dir("env3"))
			return map[string]string{"profile": "p"}
		},
		observe: pfMade("env2.db", "env3.db"),
	},
	{
		name: "ADBC_PROFILE_PATH before the user's directory",
		build: func(e *mfEnv) map[string]string {
			e.profile("env/p.toml", e.sqlite, e.db("env.db"))
			e.profile("xdg/adbc/profiles/p.toml", e.sqlite, e.db("user.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("env"))
			return map[string]string{"profile": "p"}
		},
		observe: pfMade("env.db", "user.db"),
	},
	{
		name: "the user's directory ($XDG_CONFIG_HOME/adbc/profiles)",
		build: func(e *mfEnv) map[string]string {
			e.profile("xdg/adbc/profiles/p.toml", e.sqlite, e.db("user.db"))
			return map[string]string{"profile": "p"}
		},
		observe: pfMade("user.db"),
	},
	{
		name: "the user's directory without XDG_CONFIG_HOME (~/.config/adbc/profiles)",
		build: func(e *mfEnv) map[string]string {
			e.profile("home/.config/adbc/profiles/p.toml", e.sqlite, e.db("user.db"))
			os.Unsetenv("XDG_CONFIG_HOME")
			return map[string]string{"profile": "p"}
		},
		observe: pfMade("user.db"),
	},
	{
		name: "$CONDA_PREFIX/etc/adbc/profiles",
		build: func(e *mfEnv) map[string]string {
			e.profile("conda/etc/adbc/profiles/p.toml", e.sqlite, e.db("conda.db"))
			e.setenv("CONDA_PREFIX", e.dir("conda"))
			return map[string]string{"profile": "p"}
		},
		observe: pfMade("conda.db"),
		// The spec lists it "if built with Conda support"; Arrow's build
		// here is not, and says so in its message.
		differ: "the C manager here is built without Conda support",
		cWant:  adbc.StatusNotFound,
	},
	{
		name: "a bad profile first in the search stops it",
		build: func(e *mfEnv) map[string]string {
			m := e.file("env1/p.toml", "profile_version = 1\n[Options\n")
			e.profile("env2/p.toml", e.sqlite, e.db("env2.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("env1")+string(os.PathListSeparator)+e.dir("env2"))
			e.mention(m)
			return map[string]string{"profile": "p"}
		},
		want:    adbc.StatusInvalidArgument,
		observe: pfMade("env2.db"),
	},

	// ---- not found
	{
		name: "a name found nowhere",
		build: func(e *mfEnv) map[string]string {
			e.setenv("ADBC_PROFILE_PATH", e.dir("env"))
			// "Profile not found": Arrow's C manager's words, which programs look for.
			e.mention("Profile not found: nosuchprofile", e.dir("env"), filepath.Join(e.root, "xdg", "adbc", "profiles"))
			return map[string]string{"uri": "profile://nosuchprofile"}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "an absolute .toml path that does not exist",
		build: func(e *mfEnv) map[string]string {
			p := filepath.Join(e.root, "nowhere", "p.toml")
			e.mention(p)
			return map[string]string{"profile": p}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "an absolute path without .toml that does not exist",
		build: func(e *mfEnv) map[string]string {
			p := filepath.Join(e.root, "nowhere", "p")
			e.mention(p + ".toml")
			return map[string]string{"profile": p}
		},
		want: adbc.StatusNotFound,
		// The C manager tries to parse the missing file and reports a
		// parse error ("File could not be opened for reading").
		differ: "the C manager answers a missing file here as a bad profile",
		cWant:  adbc.StatusInvalidArgument,
	},
	{
		name: "a name with another extension: NAME.ext.toml",
		build: func(e *mfEnv) map[string]string {
			e.profile("prof/prod.eu.toml", e.sqlite, e.db("eu.db"))
			e.setenv("ADBC_PROFILE_PATH", e.dir("prof"))
			return map[string]string{"profile": "prod.eu"}
		},
		observe: pfMade("eu.db"),
		// std::filesystem's replace_extension makes prod.eu prod.toml to
		// the C manager: profiles prod.eu and prod.us would both read
		// prod.toml, one with the other's credentials.
		differ: "the C manager replaces the extension (prod.eu: prod.toml)",
		cWant:  adbc.StatusNotFound,
	},

	// ---- bad profiles
	{
		name: "not TOML",
		build: func(e *mfEnv) map[string]string {
			p := e.file("p.toml", "profile_version = 1\n[Options\n")
			e.mention(p)
			return map[string]string{"profile": p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "no profile_version",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile_version")
			return map[string]string{"profile": e.file("p.toml", "driver = "+strconv.Quote(e.sqlite)+"\n[Options]\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "profile_version 2",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile_version", "2")
			return map[string]string{"profile": e.file("p.toml", "profile_version = 2\n[Options]\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "profile_version a string",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile_version", "string")
			return map[string]string{"profile": e.file("p.toml", "profile_version = \"1\"\n[Options]\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "the draft format (version, [options])",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile_version")
			return map[string]string{"profile": e.file("p.toml", "version = 1\ndriver = "+strconv.Quote(e.sqlite)+"\n[options]\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "no [Options]",
		build: func(e *mfEnv) map[string]string {
			e.mention("[Options]")
			return map[string]string{"profile": e.file("p.toml", "profile_version = 1\ndriver = "+strconv.Quote(e.sqlite)+"\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "Options not a table",
		build: func(e *mfEnv) map[string]string {
			e.mention("Options")
			return map[string]string{"profile": e.file("p.toml", "profile_version = 1\nOptions = 3\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "an array option",
		build: func(e *mfEnv) map[string]string {
			e.mention("x", "array")
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "x = [1, 2]\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "a date option",
		build: func(e *mfEnv) map[string]string {
			e.mention("a.x", "date")
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "a.x = 1979-05-27T07:32:00Z\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "driver not a string",
		build: func(e *mfEnv) map[string]string {
			e.mention("driver", "integer")
			return map[string]string{"profile": e.file("p.toml", "profile_version = 1\ndriver = 3\n[Options]\n"), "driver": e.sqlite}
		},
		want: adbc.StatusInvalidArgument,
		// The C manager takes a driver that is not a string as none.
		differ: "the C manager ignores a driver that is not a string",
		cWant:  adbc.StatusOK,
	},

	// ---- the driver
	{
		name: "no driver in the profile: the driver option's",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", "", e.db("p.db")), "driver": e.sqlite}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "no driver in the profile, nor anywhere",
		build: func(e *mfEnv) map[string]string {
			e.mention("driver")
			return map[string]string{"profile": e.profile("p.toml", "", "")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "the profile's driver and the driver option the same",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, e.db("p.db")), "driver": e.sqlite}
		},
		observe: pfMade("p.db"),
	},
	{
		name: "the profile's driver and the driver option differ",
		build: func(e *mfEnv) map[string]string {
			p := e.profile("p.toml", e.sqlite, e.db("p.db"))
			e.mention(p, "other")
			return map[string]string{"profile": p, "driver": "other"}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "the profile's driver missing: the error names both",
		build: func(e *mfEnv) map[string]string {
			lib := filepath.Join(e.root, "nowhere", "libadbc_driver_x.so")
			p := e.profile("p.toml", lib, "")
			e.mention(p, lib)
			return map[string]string{"profile": p}
		},
		want: adbc.StatusNotFound,
	},
	{
		name: "the profile's driver a manifest name, searched",
		build: func(e *mfEnv) map[string]string {
			e.manifest("drivers/sqlite.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("drivers"))
			return map[string]string{"profile": e.profile("p.toml", "sqlite", e.db("p.db"))}
		},
		flags:   mfFlags(mfFDefault),
		observe: pfMade("p.db"),
	},
	{
		name: "the profile's uri scheme names the driver",
		build: func(e *mfEnv) map[string]string {
			e.manifest("drivers/sqlite.toml")
			e.setenv("ADBC_DRIVER_PATH", e.dir("drivers"))
			return map[string]string{"profile": e.profile("p.toml", "", "uri = "+strconv.Quote(mfSQLiteURI)+"\n")}
		},
		flags: mfFlags(mfFDefault),
	},
	{
		name: "a profile naming a profile:// uri",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile://")
			return map[string]string{"profile": e.profile("p.toml", "", "uri = 'profile://other'\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "a profile naming a profile:// driver",
		build: func(e *mfEnv) map[string]string {
			e.mention("profile://")
			return map[string]string{"profile": e.profile("p.toml", "profile://other", "")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "two profiles: the option and a profile:// uri",
		build: func(e *mfEnv) map[string]string {
			p := e.profile("p.toml", e.sqlite, "")
			e.mention("profile")
			return map[string]string{"profile": p, "uri": "profile://" + p}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "two profiles: a profile:// driver and uri",
		build: func(e *mfEnv) map[string]string {
			p := e.profile("p.toml", e.sqlite, "")
			return map[string]string{"driver": "profile://" + p, "uri": "profile://" + p}
		},
		want: adbc.StatusInvalidArgument,
	},

	// ---- the options
	{
		name: "options set win over the profile's",
		build: func(e *mfEnv) map[string]string {
			p := e.profile("p.toml", e.sqlite, e.db("profile.db"))
			return map[string]string{"profile": p, "uri": "file:" + filepath.Join(e.root, "set.db")}
		},
		observe: pfMade("profile.db", "set.db"),
	},
	{
		name: "an option the driver does not know reaches the driver",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "no.such.option = 'x'\n")}
		},
		want:      adbc.StatusNotImplemented,
		driverErr: true,
	},
	{
		name: "an integer option the driver does not know reaches the driver",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "no.such.option = 3\n")}
		},
		want:      adbc.StatusNotImplemented,
		driverErr: true,
	},
	{
		name: "a boolean option the driver does not know reaches the driver",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "[Options.no.such]\noption = true\n")}
		},
		want:      adbc.StatusNotImplemented,
		driverErr: true,
	},
	{
		name: "{{ env_var(NAME) }} in a value",
		build: func(e *mfEnv) map[string]string {
			e.setenv("CDEVICE_TEST_PROFILE_DIR", e.root)
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "uri = 'file:{{ env_var(CDEVICE_TEST_PROFILE_DIR) }}/{{env_var(CDEVICE_TEST_UNSET)}}env.db'\n")}
		},
		observe: pfMade("env.db"),
	},
	{
		name: "{{ }} with something other than env_var",
		build: func(e *mfEnv) map[string]string {
			e.mention("uri", "{{ foo(A) }}")
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "uri = '{{ foo(A) }}'\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "env_var without its closing parenthesis",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "uri = '{{ env_var(A }}'\n")}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "env_var() without a name, in an option that is set anyway",
		build: func(e *mfEnv) map[string]string {
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "uri = '{{ env_var() }}'\n"), "uri": ":memory:"}
		},
		want: adbc.StatusInvalidArgument,
	},
	{
		name: "env_var expanding past 16 MiB in all",
		build: func(e *mfEnv) map[string]string {
			e.setenv("CDEVICE_TEST_BIG", strings.Repeat("x", 8<<10))
			return map[string]string{"profile": e.profile("p.toml", e.sqlite, "uri = '"+strings.Repeat("{{env_var(CDEVICE_TEST_BIG)}}", 2100)+"'\n")}
		},
		want: adbc.StatusInvalidArgument,
		rule: "what interpolation adds to a profile is bounded (16 MiB): 55,000 references to a 7 KB variable made a gigabyte",
		// It hands the driver a 17 MB uri, which it fails to open.
		cAnyStatus: "the C manager's answer is the driver's",
	},
}

func TestProfile(t *testing.T) { mfRun(t, profileCases) }

// TestProfileErrorsWrapErrLoad: every failure of the table is an adbc.Error
// with the case's status, and wraps ErrLoad.
func TestProfileErrorsWrapErrLoad(t *testing.T) { mfRunErrors(t, profileCases) }

// TestProfileOptionTypes: a profile's options reach the driver by their
// TOML type (strings and booleans through SetOption, integers through
// SetOptionInt, floats through SetOptionDouble; nested tables' keys joined
// by dots), values interpolated, the options set winning; read back from
// the C double, which keeps each option with the call that set it.
func TestProfileOptionTypes(t *testing.T) {
	d := newDouble(t)
	e := &mfEnv{t: t, root: t.TempDir()}
	t.Setenv("CDEVICE_TEST_PROFILE_USER", "ada")
	p := e.profile("p.toml", d.path, `"k.str" = "a-{{ env_var(CDEVICE_TEST_PROFILE_USER) }}-{{env_var(CDEVICE_TEST_UNSET)}}"
k.bool = true
k.int = -1099511627776
k.double = 2.5
set.here = "the profile's"
[Options.deep.er]
key = "nested"
`)
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"profile": p, "set.here": "mine"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := db.(adbc.GetSetOptions)
	for k, want := range map[string]string{"k.str": "a-ada-", "k.bool": "true", "set.here": "mine", "deep.er.key": "nested"} {
		if v, err := o.GetOption(k); err != nil || v != want {
			t.Errorf("GetOption(%s) = %q, %v; want %q", k, v, err, want)
		}
	}
	if v, err := o.GetOptionInt("k.int"); err != nil || v != -1<<40 {
		t.Errorf("GetOptionInt(k.int) = %d, %v; want %d", v, err, int64(-1<<40))
	}
	if v, err := o.GetOptionDouble("k.double"); err != nil || v != 2.5 {
		t.Errorf("GetOptionDouble(k.double) = %g, %v; want 2.5", v, err)
	}
	// Set as an integer, it is not a string option of the double.
	if _, err := o.GetOption("k.int"); err == nil {
		t.Errorf("k.int is a string option too: it was set through SetOption")
	}
	for _, k := range []string{"profile", "driver"} {
		if _, err := o.GetOption(k); err == nil {
			t.Errorf("the driver was given the manager's option %q", k)
		}
	}
}
