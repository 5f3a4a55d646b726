package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/purearrow/cdevice/internal/gpurt"
)

// TestUpToDate: each runtime package's device_gen.go is what the table
// gives (go generate ./device/... rewrites them).
func TestUpToDate(t *testing.T) {
	for pkg := range targets {
		want, err := generate(pkg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "..", "device", pkg, "device_gen.go")
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what gpurtgen writes: run go generate ./device/%s", path, pkg)
		}
	}
}

// TestCoversGPURT: every exported method of *gpurt.Device is wrapped or
// deliberately left out, and the table names no other.
func TestCoversGPURT(t *testing.T) {
	typ := reflect.TypeFor[*gpurt.Device]()
	listed := map[string]bool{}
	for _, m := range methods {
		if listed[m.Name] {
			t.Errorf("%s is in the table twice", m.Name)
		}
		listed[m.Name] = true
		if _, ok := typ.MethodByName(m.Name); !ok {
			t.Errorf("%s: *gpurt.Device has no such method", m.Name)
		}
	}
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if _, skip := notWrapped[name]; !listed[name] && !skip {
			t.Errorf("*gpurt.Device.%s is neither in the table nor in notWrapped", name)
		}
	}
}
