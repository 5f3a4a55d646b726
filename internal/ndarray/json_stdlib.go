//go:build tinygo || arrow_json_stdlib

package ndarray

import (
	"bytes"

	"encoding/json"
)

// The JSON decoder array.Builder's Unmarshal methods take: arrow-go's
// internal json package is encoding/json's under these build tags.
type jsonDecoder = json.Decoder

func newJSONDecoder(data []byte) *jsonDecoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec
}

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
