//go:build windows

package main

// libraryNames: conda-forge ships gdal.dll; OSGeo4W and GISInternals name
// it after the version (gdal310.dll, ...), so pass -lib there.
var libraryNames = []string{"gdal.dll"}
