package cdevice

// SetIdentityImports turns identity imports (an import of our own untouched
// export returns the exported value) on or off and returns the old setting.
// Tests only: it is not safe to call while imports run.
func SetIdentityImports(on bool) (old bool) {
	old, identityImports = identityImports, on
	return old
}
