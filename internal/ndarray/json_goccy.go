//go:build !tinygo && !arrow_json_stdlib

package ndarray

import (
	"bytes"

	json "github.com/goccy/go-json"
)

// The JSON decoder array.Builder's Unmarshal methods take: arrow-go's
// internal json package is goccy/go-json's under these build tags.
type jsonDecoder = json.Decoder

func newJSONDecoder(data []byte) *jsonDecoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec
}
