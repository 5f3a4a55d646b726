package drivermgr

import (
	"fmt"
	"github.com/purearrow/cdevice/adbc/internal/redact"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-adbc/go/adbc"
)

// loadRequest is what the options ask of the loader.
type loadRequest struct {
	driver, entrypoint string
	flags              int
	extraPaths         []string
}

// A request is what NewDatabase's options ask for: the driver to load and
// its database options, a connection profile's merged in.
type request struct {
	loadRequest
	profile string            // the connection profile's path, or ""
	opts    map[string]string // the driver's string options
	ints    map[string]int64  // a profile's integer options
	doubles map[string]float64
	// secrets: the credentials of the options and the profile's, masked
	// in every error of the request, its load, and its database.
	secrets *redact.Secrets
}

// newRequest sorts the options into the manager's and the driver's, reads
// the connection profile they name (the options set win over its own),
// and finds the driver: the "driver" option (split as driverURI says when
// it has a colon: driver:uri, scheme://...), else the profile's, else the
// uri's part before its first colon (the whole uri where it has none).
// Its errors show none of the credentials (q.secrets) the options give.
func newRequest(opts map[string]string) (*request, error) {
	q := &request{loadRequest: loadRequest{flags: LoadFlagsDefault}, opts: map[string]string{}, secrets: &redact.Secrets{}}
	q.secrets.Options(opts)
	if err := q.read(opts); err != nil {
		return nil, q.secrets.Error(err)
	}
	return q, nil
}

// read is newRequest's work on q.
func (q *request) read(opts map[string]string) error {
	var profileName string
	var profileFrom, profilePaths []string
	for k, v := range opts {
		switch k {
		case OptionDriver:
			q.driver = v
		case OptionEntrypoint:
			q.entrypoint = v
		case OptionAdditionalSearchPaths:
			q.extraPaths = splitList(v)
		case OptionAdditionalProfileSearchPaths:
			profilePaths = splitList(v)
		case LoadFlagsOptionKey:
			f, err := parseFlags(v)
			if err != nil {
				return err
			}
			q.flags = f
		case OptionProfile:
			profileName = v
			profileFrom = append(profileFrom, fmt.Sprintf("%s %q", OptionProfile, v))
		default:
			q.opts[k] = v
		}
	}
	if name, ok := strings.CutPrefix(q.driver, profileScheme); ok {
		profileName = name
		profileFrom = append(profileFrom, fmt.Sprintf("%s %q", OptionDriver, q.driver))
		q.driver = ""
	}
	if name, ok := strings.CutPrefix(q.opts[OptionURI], profileScheme); ok {
		profileName = name
		profileFrom = append(profileFrom, fmt.Sprintf("%s %q", OptionURI, q.opts[OptionURI]))
		delete(q.opts, OptionURI)
	}
	if len(profileFrom) > 1 {
		return loadErr(adbc.StatusInvalidArgument, nil, "more than one connection profile (%s): name one", strings.Join(profileFrom, ", "))
	}
	if profileName != "" {
		if err := q.merge(profileName, profilePaths); err != nil {
			return err
		}
		if strings.HasPrefix(q.driver, profileScheme) || strings.HasPrefix(q.opts[OptionURI], profileScheme) {
			return loadErr(adbc.StatusInvalidArgument, nil, "connection profile %q names a profile:// driver or uri: a profile cannot name another", profileName)
		}
	}
	if d, uri, ok := driverURI(q.driver); ok {
		q.driver, q.opts[OptionURI] = d, uri
	}
	if uri := q.opts[OptionURI]; q.driver == "" && uri != "" {
		if d, rest, ok := driverURI(uri); ok {
			q.driver, q.opts[OptionURI] = d, rest
		} else if !strings.Contains(uri, ":") {
			q.driver = uri // no colon: the uri is the driver's name
		}
	}
	return nil
}

// merge reads the profile name names and merges it into q: its driver,
// unless q names another (an error), and its options not set already,
// string values interpolated, their credentials added to q.secrets.
func (q *request) merge(name string, paths []string) error {
	p, err := findProfile(name, paths)
	if err != nil {
		return err
	}
	q.profile = p.path
	if p.driver != "" {
		if q.driver != "" && q.driver != p.driver {
			return loadErr(adbc.StatusInvalidArgument, nil, "connection profile %s names driver %q, not the %q asked for", p.path, p.driver, q.driver)
		}
		q.driver = p.driver
	}
	left := maxInterpolated
	for k, v := range p.strs {
		v, err := interpolate(k, v, &left)
		if err != nil {
			return loadErr(adbc.StatusInvalidArgument, err, "connection profile %s: %v", p.path, err)
		}
		q.secrets.Option(k, v)
		if _, set := q.opts[k]; !set {
			q.opts[k] = v
		}
	}
	q.ints, q.doubles = map[string]int64{}, map[string]float64{}
	for k, v := range p.ints {
		if _, set := q.opts[k]; !set {
			q.ints[k] = v
		}
	}
	for k, v := range p.doubles {
		if _, set := q.opts[k]; !set {
			q.doubles[k] = v
		}
	}
	return nil
}

// driverURI splits s, a driver or uri option, as ADBC's C driver manager
// does: at the first colon, the driver before it; then "scheme://rest" (or
// "scheme:/path") is the whole uri, and "driver:rest" (sqlite:file::memory:)
// the rest; nothing before the colon names no driver. ok is false for s
// without a colon or with nothing after it, and for a path with a volume
// name (C:\drivers\x.dll), which the C manager tells from a URI by its
// existence.
func driverURI(s string) (driver, uri string, ok bool) {
	d, rest, found := strings.Cut(s, ":")
	if !found || rest == "" || filepath.VolumeName(s) != "" {
		return "", "", false
	}
	if rest[0] == '/' {
		return d, s, true
	}
	return d, rest, true
}
