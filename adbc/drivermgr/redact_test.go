package drivermgr_test

import (
	"strings"
	"testing"

	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// secret is the password of the connection strings below: no error may
// show it, at any depth of its chain.
const secret = "S3cretPW"

// wantNoSecret fails t if err, or any error it wraps, shows secret.
func wantNoSecret(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if strings.Contains(e.Error(), secret) {
			t.Errorf("%s: %T shows the password: %s", what, e, e)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
}

// A connection string with a password, through every error of finding and
// loading a driver that names it (the driver option as a URI of a proper
// scheme, of a scheme that is not one, mistyped, refused as a relative
// path; the uri option alone), and through a real driver's failure to
// connect: the password is masked, and the rest still says what went
// wrong.
func TestPasswordsAreMasked(t *testing.T) {
	uri := "postgresql://alice:" + secret + "@127.0.0.1:1/db"
	cases := []struct {
		name string
		opts map[string]string
	}{
		{"driver a URI", map[string]string{"driver": uri}},
		{"driver a URI of a scheme with _", map[string]string{"driver": "pg_x://alice:" + secret + "@h/db"}},
		{"driver a URI of a scheme with a digit first", map[string]string{"driver": "1pg://alice:" + secret + "@h/db"}},
		{"driver a mistyped URI", map[string]string{"driver": "postgresql:/alice:" + secret + "@h/db"}},
		{"driver a URI, relative paths not allowed", map[string]string{"driver": "pg_x://alice:" + secret + "@h/db", drivermgr.LoadFlagsOptionKey: "0"}},
		{"uri alone", map[string]string{"uri": uri}},
		{"a libpq keyword string", map[string]string{"driver": "/nonexistent/x.so", "uri": "host=h password=" + secret}},
	}
	cases = append(cases, struct {
		name string
		opts map[string]string
	}{"PostgreSQL's driver cannot connect", nil})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.opts == nil {
				c.opts = map[string]string{"driver": sharedADBC(t, "libadbc_driver_postgresql.so"), "uri": uri}
			}
			db, err := drivermgr.Driver{}.NewDatabase(c.opts)
			if err == nil {
				var cn interface{ Close() error }
				cn, err = db.Open(t.Context())
				if err == nil {
					cn.Close()
				}
				db.Close()
			}
			wantNoSecret(t, c.name, err)
			t.Logf("%v", err)
		})
	}
}
