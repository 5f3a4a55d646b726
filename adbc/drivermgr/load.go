package drivermgr

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/regular"
)

// Load flags (LoadFlagsOptionKey's value, a decimal integer): where a
// driver named without a path is searched for, and whether a relative
// path may name one.
const (
	LoadFlagsSearchEnv          = 1 << iota // $ADBC_DRIVER_PATH and $CONDA_PREFIX/etc/adbc/drivers
	LoadFlagsSearchPath                     // the user's configuration directory
	LoadFlagsSearchSystem                   // the system's configuration directory
	LoadFlagsAllowRelativePaths             // a relative path, from the working directory

	LoadFlagsDefault = LoadFlagsSearchEnv | LoadFlagsSearchPath | LoadFlagsSearchSystem | LoadFlagsAllowRelativePaths
	// LoadFlagsOptionKey is the database option that sets the load flags.
	LoadFlagsOptionKey = "load_flags"
)

// LoadFlagsSearchUser is LoadFlagsSearchPath by the name the ADBC
// documentation gives it.
const LoadFlagsSearchUser = LoadFlagsSearchPath

// The driver manager's own database options; NewDatabase consumes them and
// passes the others to the driver.
const (
	OptionDriver     = "driver"
	OptionEntrypoint = "entrypoint"
	// OptionAdditionalSearchPaths lists more directories to search for
	// manifests (os.PathListSeparator between them), after
	// $ADBC_DRIVER_PATH.
	OptionAdditionalSearchPaths = "additional_manifest_search_path_list"
	OptionURI                   = "uri"
)

const defaultEntrypoint = "AdbcDriverInit"

// ErrLoad is wrapped by every error of finding and loading a driver (with
// adbc.Error's status: NotFound for a driver that is not there,
// InvalidArgument for a bad name or manifest, Internal for a library that
// is not an ADBC driver).
var ErrLoad = errors.New("drivermgr: cannot load the driver")

// loadError is an adbc.Error (errors.As finds it) that also wraps ErrLoad
// and the cause.
type loadError struct {
	err   error // adbcerr's
	cause error
}

func (e *loadError) Error() string { return e.err.Error() }

func (e *loadError) Unwrap() []error {
	errs := []error{e.err, ErrLoad}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// loadErr is the one way a loading error is made. (A driver option may be
// a connection string with a password: NewDatabase masks what it returns.)
func loadErr(st adbc.Status, cause error, format string, args ...any) error {
	return &loadError{err: adbcerr.New(st, fmt.Sprintf(format, args...)), cause: cause}
}

// load resolves r.driver to a library and entry point, as the ADBC driver
// manager does, and initializes the driver: a name with a directory part
// or an extension is a file (relative ones only where the load flags allow
// them): a manifest (.toml), a library (any other extension), or, without
// an extension, that path's manifest, else the file itself, else that
// path's library (with the platform's extension); a bare name
// is a manifest searched for in the search directories (one that names no
// library for this platform, or a library that is not there, is passed
// over for the next), then a library the system's loader finds. A
// manifest's entry point wins over the entrypoint option.
func load(r loadRequest) (*driver, error) {
	name := r.driver
	if name == "" {
		// "Must set 'driver' option" as Arrow's C manager says it.
		return nil, loadErr(adbc.StatusInvalidArgument, nil, "Must set 'driver' option before AdbcDatabaseInit (no driver: set %q, or a %q that names one)", OptionDriver, OptionURI)
	}
	ext := filepath.Ext(name)
	if isPath(name) || ext == ".toml" {
		if !filepath.IsAbs(name) && r.flags&LoadFlagsAllowRelativePaths == 0 {
			return nil, loadErr(adbc.StatusInvalidArgument, nil,
				"driver %q is a relative path, and the load flags do not allow relative paths", name)
		}
		switch ext {
		case ".toml":
			return openManifest(name, r.entrypoint)
		case "":
			if _, err := os.Stat(name + ".toml"); err == nil {
				return openManifest(name+".toml", r.entrypoint)
			}
			fi, err := os.Stat(name)
			if err == nil && fi.Mode().IsRegular() {
				return open(name, r.entrypoint) // a library named without its extension
			}
			if _, lerr := os.Stat(name + libraryExt); lerr != nil {
				if err == nil && fi.IsDir() {
					return nil, notLibrary(name)
				}
				return nil, loadErr(adbc.StatusNotFound, lerr, "driver %s: no such file: no %s, %s.toml or %s%s", name, name, name, name, libraryExt)
			}
			return open(name+libraryExt, r.entrypoint)
		}
		return open(name, r.entrypoint)
	}
	if ext != "" { // a library's file name, for the system's loader
		return open(name, r.entrypoint)
	}
	var searched, passed []string
	for _, pl := range searchPlaces(r) {
		searched = append(searched, pl.String())
		d, found, err := pl.lookup(name, r.entrypoint)
		if !found {
			continue
		}
		if err == nil || !errors.Is(err, adbcerr.NotFound) {
			return d, err
		}
		passed = append(passed, err.Error())
	}
	d, err := open(systemLibrary(name), r.entrypoint)
	if err != nil && errors.Is(err, adbcerr.NotFound) {
		where := "no search directory"
		if len(searched) > 0 {
			where = strings.Join(searched, ", ")
		}
		msg := fmt.Sprintf("driver %q: no manifest %s.toml in %s", name, name, where)
		if len(passed) > 0 {
			msg += " that serves (" + strings.Join(passed, "; ") + ")"
		}
		return nil, loadErr(adbc.StatusNotFound, err, "%s, and the system's loader finds no library: %v", msg, err)
	}
	return d, err
}

// openManifest loads the driver the manifest at path names: its library
// for this platform, its entry point (else entrypoint).
func openManifest(path, entrypoint string) (*driver, error) {
	m, err := readManifest(path)
	if err != nil {
		return nil, err
	}
	lib, err := m.library(path)
	if err != nil {
		return nil, err
	}
	if m.Driver.Entrypoint != "" {
		entrypoint = m.Driver.Entrypoint
	}
	d, err := open(lib, entrypoint)
	if err != nil {
		return nil, within("manifest "+path+": ", err)
	}
	return d, nil
}

// within is err, an error of loading, said of where it came from: its
// adbc.Error with prefix before the message, still wrapping err.
func within(prefix string, err error) error {
	e := asAdbc(err)
	e.Msg = prefix + e.Msg
	return &loadError{err: adbcerr.Wrap(e), cause: err}
}

// isPath: name has a directory part (it is a path, not a name to search).
func isPath(name string) bool {
	return filepath.IsAbs(name) || strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator)
}

// open loads the library and initializes the driver through its entry
// point: entry, or else the name derived from the library's file name
// (libadbc_driver_sqlite.so: AdbcDriverSqliteInit), then AdbcDriverInit.
func open(path, entry string) (*driver, error) {
	if err := refuseGo(path); err != nil {
		return nil, err
	}
	l, err := ffi.Open(path)
	if err != nil {
		st := adbc.StatusInternal
		if errors.Is(err, ffi.ErrLibraryNotFound) {
			st = adbc.StatusNotFound
		}
		if info, ok := readLibrary(path); ok && info.foreign() != "" {
			return nil, loadErr(adbc.StatusInvalidArgument, err, "driver %s is %s: %v", path, info.foreign(), err)
		}
		return nil, loadErr(st, err, "driver %s: %v", path, err)
	}
	names := []string{entry}
	if entry == "" {
		names = []string{derivedEntrypoint(path), defaultEntrypoint}
	}
	for _, n := range names {
		fn, err := l.Symbol(n)
		if err == nil {
			d, err := initDriver(l.Path(), n, fn)
			if err != nil {
				return nil, &loadError{err: adbcerr.Wrap(asAdbc(err)), cause: err}
			}
			return d, nil
		}
	}
	// "dlsym(X) failed: ...: undefined symbol: X" as Arrow's C manager says
	// it, for programs that look for its words; then what the library
	// exports that looks like an entry point.
	hint := fmt.Sprintf("set %q to its entry point", OptionEntrypoint)
	if info, ok := readLibrary(l.Path()); ok {
		if eps := info.entryPoints(); len(eps) > 0 {
			hint = fmt.Sprintf("it exports %s: set %s=%s", strings.Join(eps, ", "), OptionEntrypoint, eps[0])
		} else {
			hint = fmt.Sprintf("it exports no ADBC entry point (no Adbc...Init, ..._adbc_init): is it an ADBC driver? Else set %q", OptionEntrypoint)
		}
	}
	return nil, loadErr(adbc.StatusInternal, nil, "dlsym(%s) failed: driver %s has no entry point %s: undefined symbol: %s (%s)",
		names[0], path, strings.Join(names, " or "), names[0], hint)
}

// notLibrary is the error of a driver path that is a directory.
func notLibrary(path string) error {
	return loadErr(adbc.StatusInvalidArgument, nil, "driver %s is a directory, not a driver's library or manifest", path)
}

// asAdbc is err's adbc.Error.
func asAdbc(err error) adbc.Error {
	if e, ok := adbcerr.From(err); ok {
		return e
	}
	return adbc.Error{Code: adbc.StatusInternal, Msg: err.Error()}
}

// derivedEntrypoint is the entry point the ADBC driver manager derives
// from a library's file name: the name up to its first dot, without "lib",
// its words (split at _ and -) capitalized and joined, "Adbc" before them
// unless they start so, "Init" after.
func derivedEntrypoint(path string) string {
	base := path
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimPrefix(base, "lib")
	var b strings.Builder
	for _, w := range strings.FieldsFunc(base, func(r rune) bool { return r == '_' || r == '-' }) {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	name := b.String()
	if !strings.HasPrefix(name, "Adbc") {
		name = "Adbc" + name
	}
	return name + "Init"
}

// refuseGo refuses a path that is no regular file (a directory said as
// such) and a driver built with Go (-buildmode=c-shared): its own Go
// runtime cannot share a process with ours. Its build information names
// the Go package to import instead.
func refuseGo(path string) error {
	f, err := regular.Open(path)
	if errors.Is(err, regular.ErrNotRegular) {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return notLibrary(path)
		}
		return loadErr(adbc.StatusInvalidArgument, err, "driver %s: %v", path, err)
	}
	if err != nil {
		return nil // a name to search, or not there: the loader decides
	}
	defer f.Close()
	info, err := buildinfo.Read(f)
	if err != nil {
		return nil // not a Go binary: the loader decides
	}
	pkg := info.Path
	if info.Main.Path != "" && !strings.HasPrefix(pkg, info.Main.Path) {
		pkg = info.Main.Path
	}
	return loadErr(adbc.StatusInvalidArgument, nil,
		"driver %s is built with Go (%s, %s): a Go driver cannot be loaded into a Go program; import its Go package instead (%s)",
		path, pkg, info.GoVersion, goPackageHint(pkg))
}

// goPackageHint maps the c-shared packages of arrow-adbc's Go drivers
// (go/adbc/pkg/<name>) to their Go packages (go/adbc/driver/<name>).
func goPackageHint(pkg string) string {
	if i := strings.Index(pkg, "/go/adbc/pkg/"); i >= 0 {
		return pkg[:i] + "/go/adbc/driver/" + pkg[i+len("/go/adbc/pkg/"):]
	}
	return pkg
}

// parseFlags reads LoadFlagsOptionKey's value.
func parseFlags(s string) (int, error) {
	f, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || f < 0 {
		return 0, loadErr(adbc.StatusInvalidArgument, err, "invalid load flags value: %q", s)
	}
	return f, nil
}
