//go:build unix

package cdevice

import "syscall"

// On Unix the C runtime's errno values are the kernel's, which syscall has.
const (
	ePERM     = int32(syscall.EPERM)
	eNOENT    = int32(syscall.ENOENT)
	eIO       = int32(syscall.EIO)
	eAGAIN    = int32(syscall.EAGAIN)
	eNOMEM    = int32(syscall.ENOMEM)
	eACCES    = int32(syscall.EACCES)
	eBUSY     = int32(syscall.EBUSY)
	eNODEV    = int32(syscall.ENODEV)
	eINVAL    = int32(syscall.EINVAL)
	eNOSPC    = int32(syscall.ENOSPC)
	ePIPE     = int32(syscall.EPIPE)
	eNOSYS    = int32(syscall.ENOSYS)
	eOVERFLOW = int32(syscall.EOVERFLOW)
	eNOTSUP   = int32(syscall.ENOTSUP)
	eCANCELED = int32(syscall.ECANCELED)
	eTIMEDOUT = int32(syscall.ETIMEDOUT)
)

// errnoOfSyscall: a syscall.Errno is the C runtime's code already.
func errnoOfSyscall(se syscall.Errno) Errno { return Errno(se) }
