package ffi

import (
	"runtime"
	"testing"
)

// Bind calls what Call cannot: a double argument and result (ldexp), and a
// struct returned by value (div's div_t) where purego passes structs; where
// it does not (32-bit targets), binding the struct is an error, not a
// panic.
func TestBind(t *testing.T) {
	lib, err := Open(CLibrary)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := lib.Symbol("ldexp")
	if err != nil {
		t.Skipf("%s has no ldexp (it is in libm here): %v", CLibrary, err)
	}
	var ldexp func(x float64, exp int32) float64
	if err := Bind(&ldexp, fn); err != nil {
		t.Fatal(err)
	}
	if got := ldexp(1.5, 3); got != 12 {
		t.Errorf("ldexp(1.5, 3) = %v, want 12", got)
	}

	type divT struct{ Quot, Rem int32 }
	fn, err = lib.Symbol("div")
	if err != nil {
		t.Fatal(err)
	}
	var div func(num, den int32) divT
	err = Bind(&div, fn)
	switch runtime.GOARCH {
	case "amd64", "arm64":
		if err != nil {
			t.Fatal(err)
		}
		if got := div(17, 5); got != (divT{3, 2}) {
			t.Errorf("div(17, 5) = %+v, want {3 2}", got)
		}
	default:
		if err == nil {
			t.Logf("purego binds a struct result on %s", runtime.GOARCH)
		}
	}
	var bad func(chan int)
	if err := Bind(&bad, fn); err == nil {
		t.Error("a channel argument bound")
	}
}
