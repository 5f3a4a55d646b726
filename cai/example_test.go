package cai_test

import (
	"encoding/json"
	"fmt"

	"github.com/purearrow/cdevice/cai"
)

// A CUDA Array Interface descriptor, as Python's __cuda_array_interface__
// dictionary carries it, read from JSON and checked.
func ExampleInterface() {
	var d cai.Interface
	err := json.Unmarshal([]byte(`{"shape": [1000], "typestr": "<f8", "data": [3221225472, false],
		"version": 3, "strides": null, "stream": 1}`), &d)
	if err != nil {
		panic(err)
	}
	dt, err := cai.ArrowType(d.Typestr)
	fmt.Println(d.Shape, dt, d.Validate() == nil, err)
	out, _ := d.MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// [1000] float64 true <nil>
	// {"shape":[1000],"typestr":"<f8","data":[3221225472,false],"version":3,"strides":null,"mask":null,"stream":1}
}
