package tensor_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/tensor"
)

// The canonical fixed-shape tensor type: each element of the array is a
// tensor of the given shape, stored as a fixed-size list.
func ExampleNewFixedShapeType() {
	t, err := tensor.NewFixedShapeType(arrow.PrimitiveTypes.Float32, []int64{2, 3}, nil, []string{"rows", "cols"})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.ExtensionName())
	fmt.Println(t.StorageType())
	fmt.Println(t.Serialize())
	// Output:
	// arrow.fixed_shape_tensor
	// fixed_size_list<item: float32, nullable>[6]
	// {"shape":[2,3],"dim_names":["rows","cols"]}
}
