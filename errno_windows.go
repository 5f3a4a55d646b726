package cdevice

import "syscall"

// The errno values of Windows' C runtimes (the UCRT's and mingw-w64's
// errno.h, POSIX supplement included); syscall's Errno there is a Win32
// error code, not these.
const (
	ePERM     = 1
	eNOENT    = 2
	eIO       = 5
	eAGAIN    = 11
	eNOMEM    = 12
	eACCES    = 13
	eBUSY     = 16
	eNODEV    = 19
	eINVAL    = 22
	eNOSPC    = 28
	ePIPE     = 32
	eNOSYS    = 40
	eCANCELED = 105
	eNOTSUP   = 129
	eOVERFLOW = 132
	eTIMEDOUT = 138
)

// errnoOfSyscall: a Win32 error code with no errno of its own is EIO.
func errnoOfSyscall(syscall.Errno) Errno { return EIO }
