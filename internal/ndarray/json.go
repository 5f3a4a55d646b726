package ndarray

// The bool8 builder's JSON methods, on whichever decoder arrow-go's build
// uses (json_goccy.go, json_stdlib.go).

// UnmarshalOne appends one JSON value.
func (b *bool8Builder) UnmarshalOne(dec *jsonDecoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	return b.appendToken(t)
}

// Unmarshal appends JSON values up to the end of the enclosing array.
func (b *bool8Builder) Unmarshal(dec *jsonDecoder) error {
	for dec.More() {
		if err := b.UnmarshalOne(dec); err != nil {
			return err
		}
	}
	return nil
}
