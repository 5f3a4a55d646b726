package drivermgr

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
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
		// Nesting the TOML library would take gigabytes for.
		"x = " + strings.Repeat("{a=", 5000) + "1" + strings.Repeat("}", 5000) + "\n",
		"x = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"[Options]\n" + strings.Repeat("a.", 3000) + "a = 1\n",
		"[" + strings.Repeat("a.", 3000) + "a]\n",
	} {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "fuzz.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// The memory ceiling: what reading one input may allocate in all.
		defer func(before uint64) {
			if used := heapAllocs() - before; used > maxTOMLAllocs {
				t.Fatalf("reading %d bytes allocated %d bytes (the ceiling: %d)", len(data), used, maxTOMLAllocs)
			}
		}(heapAllocs())
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
			left := maxInterpolated
			if _, err := interpolate(k, v, &left); err != nil && !errors.Is(err, errInterpolation) {
				t.Fatalf("interpolate(%q, %q): %v", k, v, err)
			}
		}
	})
}

// maxTOMLAllocs is FuzzTOMLFiles' ceiling on what reading one input
// (at most maxTOML bytes, as manifest and as profile) may allocate.
const maxTOMLAllocs = 256 << 20

// heapAllocs is the bytes this process has allocated on the heap so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
