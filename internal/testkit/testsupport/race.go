package testsupport

import "runtime/debug"

// RaceEnabled says whether this test binary was built with -race (which
// adds allocations and time of its own, so budgets do not hold under it).
func RaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
