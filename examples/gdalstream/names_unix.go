//go:build !windows

package main

import "runtime"

// libraryNames are the names GDAL's library goes by, newest first. On
// Linux the versioned names come from the runtime packages (libgdal32 is
// GDAL 3.6, the first with OGR_L_GetArrowStream); libgdal.so only exists
// where the development package is installed.
var libraryNames = func() []string {
	if runtime.GOOS == "darwin" {
		return []string{"libgdal.dylib", "/opt/homebrew/lib/libgdal.dylib", "/usr/local/lib/libgdal.dylib"}
	}
	return []string{"libgdal.so.38", "libgdal.so.37", "libgdal.so.36", "libgdal.so.35",
		"libgdal.so.34", "libgdal.so.33", "libgdal.so.32", "libgdal.so"}
}()
