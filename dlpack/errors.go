package dlpack

import (
	"fmt"

	"github.com/purearrow/cdevice"
)

// Sentinel errors. Every error of this package wraps one of cdevice's
// sentinels (ErrInvalid, ErrUnsupported, ErrNoDevice, ErrReleased,
// ErrRuntime), and these narrow some of them down; test with errors.Is.
var (
	// ErrNulls: the array has nulls, which a DLPack tensor cannot carry.
	// WithNullFill exports a copy with the nulls replaced. Wraps
	// cdevice.ErrUnsupported.
	ErrNulls = fmt.Errorf("%w: dlpack: the array has nulls and a tensor has no validity (WithNullFill exports a copy)", cdevice.ErrUnsupported)
	// ErrNotContiguous: the tensor's strides are not the row-major layout of
	// the Arrow type it would become (or byte_offset is not a multiple of the
	// element size), so it cannot be wrapped without a copy; WithAllowCopy
	// imports a copy. Wraps cdevice.ErrUnsupported.
	ErrNotContiguous = fmt.Errorf("%w: dlpack: the tensor is not laid out row-major as its Arrow type needs (WithAllowCopy imports a copy)", cdevice.ErrUnsupported)
	// ErrVersion: the tensor's DLPack major version is not 1. Wraps
	// cdevice.ErrUnsupported.
	ErrVersion = fmt.Errorf("%w: dlpack: DLPack major version is not %d", cdevice.ErrUnsupported, MajorVersion)
)

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: dlpack: %s", cdevice.ErrUnsupported, fmt.Sprintf(format, args...))
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: dlpack: %s", cdevice.ErrInvalid, fmt.Sprintf(format, args...))
}

func wrapf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
