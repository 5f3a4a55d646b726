package drivermgr_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
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

// A password given in each way (a uri's userinfo, a password option, a
// token-like option, a profile's value interpolated from the environment,
// a later SetOption) never appears in an error, even where the driver
// echoes it; and what the user wrote that is not a credential (a query
// whose words look like one) arrives as the driver wrote it.
func TestOnlySecretsAreMasked(t *testing.T) {
	d := newDouble(t)
	e := &mfEnv{t: t, root: t.TempDir()}
	t.Setenv("CDEVICE_TEST_PROFILE_SECRET", secret+"-env")
	prof := e.profile("p.toml", d.path, `uri = "postgresql://app:{{ env_var(CDEVICE_TEST_PROFILE_SECRET) }}@h/db"
`)
	for _, c := range []struct {
		name, given string
		opts        map[string]string
	}{
		{"a uri's password", secret, map[string]string{"uri": "postgresql://alice:" + secret + "@h/db"}},
		{"a password option", secret, map[string]string{"password": secret}},
		{"a token option", secret, map[string]string{"adbc.flight.sql.authorization_token": secret}},
		{"a profile's interpolated value", secret + "-env", map[string]string{"profile": prof, "driver": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, cn, st := d.session(t, c.opts)
			defer closeAll(t, db, cn, st)
			// The double's syntax error echoes the query.
			for _, q := range []string{"SELECT '" + c.given + "' AS leak", "x " + c.given} {
				if err := st.SetSqlQuery(q); err != nil {
					t.Fatal(err)
				}
				_, _, err := st.ExecuteQuery(context.Background())
				if err == nil || strings.Contains(err.Error(), c.given) || !strings.Contains(err.Error(), "***") {
					t.Errorf("a query holding the credential: %v; want it masked", err)
				}
				var ae adbc.Error
				if !errors.As(err, &ae) || strings.Contains(ae.Msg, c.given) {
					t.Errorf("its adbc.Error: %q", ae.Msg)
				}
			}
			for _, q := range []string{`SELECT 'abc`, `SELECT @`, `token: "x" password=hunter2 postgresql://bob:other@h`} {
				if err := st.SetSqlQuery(q); err != nil {
					t.Fatal(err)
				}
				_, _, err := st.ExecuteQuery(context.Background())
				if want := "double: syntax error: " + q; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%v; want the driver's message verbatim: %q", err, want)
				}
			}
		})
	}
	t.Run("a later SetOption", func(t *testing.T) {
		db, cn, st := d.session(t, nil)
		defer closeAll(t, db, cn, st)
		if err := cn.(adbc.GetSetOptions).SetOption("password", secret); err != nil {
			t.Fatal(err)
		}
		if err := st.SetSqlQuery("x " + secret); err != nil {
			t.Fatal(err)
		}
		_, _, err := st.ExecuteQuery(context.Background())
		wantNoSecret(t, "after SetOption", err)
	})
}

// Syntax errors from the three databases arrive as each wrote them: the
// user's SQL quoted back is not taken for a credential.
func TestSyntaxErrorsVerbatim(t *testing.T) {
	for _, db := range []struct {
		name string
		opts func(*testing.T) map[string]string
		want map[string]string // query: what the message must hold
	}{
		{"sqlite", scSQLiteOptions, map[string]string{`SELECT 'abc`: `unrecognized token: "'abc"`, `SELECT @`: `unrecognized token: "@"`}},
		{"postgresql", scPostgresOptions, map[string]string{`SELECT 'abc`: `unterminated quoted string at or near "'abc"`, `SELECT password FROM token`: `relation "token" does not exist`}},
		{"duckdb", scDuckDBOptions, map[string]string{`SELECT 'abc`: `unterminated quoted string at or near "'abc"`, `SELECT password FROM token`: `Table with name token does not exist`}},
	} {
		t.Run(db.name, func(t *testing.T) {
			d, err := drivermgr.Driver{}.NewDatabase(db.opts(t))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			cn, err := d.Open(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer cn.Close()
			for q, want := range db.want {
				st, err := cn.NewStatement()
				if err != nil {
					t.Fatal(err)
				}
				if err = st.SetSqlQuery(q); err == nil {
					var r interface{ Release() }
					r, _, err = st.ExecuteQuery(context.Background())
					if err == nil {
						r.Release()
					}
				}
				st.Close()
				if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "***") {
					t.Errorf("%s: %v; want %q verbatim", q, err, want)
				}
			}
		})
	}
}
