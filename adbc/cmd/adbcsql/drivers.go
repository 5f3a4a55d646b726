package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// listDrivers prints where a driver named without a path is searched for
// (under the -o options: load_flags, additional_manifest_search_path_list),
// in order, with the drivers each place holds.
func listDrivers(w io.Writer, opts options) error {
	places, err := drivermgr.SearchPlaces(opts)
	if err != nil {
		return err
	}
	for i, p := range places {
		drivers := "(none)"
		if len(p.Drivers) > 0 {
			drivers = strings.Join(p.Drivers, ", ")
		}
		fmt.Fprintf(w, "%d. %s (%s): %s\n", i+1, p.Place, p.From, drivers)
	}
	fmt.Fprintf(w, "%d. the system's loader, for the library of the name (libNAME.so, libNAME.dylib, NAME.dll)\n", len(places)+1)
	return nil
}
