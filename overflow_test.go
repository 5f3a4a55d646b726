package cdevice

import (
	"math"
	"testing"
)

func TestMulChecked(t *testing.T) {
	if p, ok := mulChecked[int64](3, 7); p != 21 || !ok {
		t.Errorf("3*7 = %d, %v", p, ok)
	}
	if p, ok := mulChecked[int64](0, math.MaxInt64); p != 0 || !ok {
		t.Errorf("0*max = %d, %v", p, ok)
	}
	if p, ok := mulChecked[int64](1<<32, 1<<31); p != 1<<63-1 || ok {
		t.Errorf("2^63 = %d, %v: want saturation", p, ok)
	}
	if p, ok := mulChecked[int64](math.MaxInt64, 1); p != math.MaxInt64 || !ok {
		t.Errorf("max*1 = %d, %v", p, ok)
	}
	if p, ok := mulChecked(math.MaxInt/2+1, 2); p != math.MaxInt || ok {
		t.Errorf("int overflow = %d, %v: want saturation at MaxInt", p, ok)
	}
}
