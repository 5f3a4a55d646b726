// Package cabi holds ADBC's C structs (adbc.h of ADBC 1.1) as Go structs,
// layout only: the driver's function table, the handles of databases,
// connections and statements, AdbcError and its details, AdbcPartitions.
// Their layout is C's on every platform (checked against adbc.h by a C
// program in the tests); nothing here calls C.
package cabi
