package drivermgr

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/purearrow/cdevice/adbc"
)

// FuzzTOMLFiles: any bytes, read as a driver manifest and as a connection
// profile, are read or refused with an adbc.Error that wraps ErrLoad:
// never a panic. What reads is used as the manager uses it (a manifest's
// library, a profile's values interpolated).
func FuzzTOMLFiles(f *testing.F) {
	for _, s := range []string{
		"manifest_version = 1\n[ADBC]\nversion = '1.1.0'\n[Driver]\nentrypoint = 'X'\nshared = '/lib/x.so'\n",
		"[Driver.shared]\nlinux_amd64 = 'a.so'\nmacos_arm64 = 3\n",
		"[Driver]\nshared = ['a']\n",
		"profile_version = 1\ndriver = 'sqlite'\n[Options]\nuri = 'file:{{ env_var(HOME) }}/x.db'\na.b.c = 3\nd = 2.5\ne = true\n[Options.f.g]\nh = '{{ env_var( }}'\n",
		"profile_version = 1\n[Options]\nx = '{{ nope(A) }} {{env_var()}} {{{{}}}}'\n",
		"profile_version = '1'\n[Options]\n",
		"profile_version = 1\nOptions = [1, {a = 2}]\n",
		"[[Options]]\nx = 1\n",
		"a = 1979-05-27T07:32:00Z\n",
		"\xff\xfe[",
	} {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "fuzz.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		check := func(what string, err error) {
			var ae adbc.Error
			if !errors.Is(err, ErrLoad) || !errors.As(err, &ae) || ae.Code == adbc.StatusOK || ae.Msg == "" {
				t.Fatalf("%s: %v (%T): not an adbc.Error wrapping ErrLoad", what, err, err)
			}
		}
		if m, err := readManifest(path); err != nil {
			check("readManifest", err)
		} else if _, err := m.library(path); err != nil {
			check("manifest library", err)
		}
		p, err := readProfile(path)
		if err != nil {
			check("readProfile", err)
			return
		}
		for k, v := range p.strs {
			if _, err := interpolate(k, v); err != nil && !errors.Is(err, errInterpolation) {
				t.Fatalf("interpolate(%q, %q): %v", k, v, err)
			}
		}
	})
}
