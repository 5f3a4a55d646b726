module github.com/purearrow/cdevice

go 1.25.0

require (
	github.com/apache/arrow-go/v18 v18.8.0
	github.com/ebitengine/purego v0.11.3
	golang.org/x/sys v0.47.0
)

require (
	github.com/goccy/go-json v0.10.6 // indirect
	github.com/google/flatbuffers v25.12.19+incompatible // indirect
	golang.org/x/exp v0.0.0-20260112195511-716be5621a96 // indirect
)
