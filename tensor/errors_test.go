package tensor_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/tensor"
)

// TestErrorPaths drives NewFixedShapeType, FromExtension and Deserialize
// into each kind of failure and checks that each error wraps its path's
// documented sentinel.
func TestErrorPaths(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	ok, err := tensor.NewFixedShapeType(i32, []int64{2, 3}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	testsupport.RunErrorCases(t, []testsupport.ErrorCase{
		testsupport.Case("NewFixedShapeType/nil value type", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := tensor.NewFixedShapeType(nil, []int64{2}, nil, nil)
			return err
		}),
		testsupport.Case("NewFixedShapeType/negative shape", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := tensor.NewFixedShapeType(i32, []int64{-2}, nil, nil)
			return err
		}),
		testsupport.Case("NewFixedShapeType/no elements", cdevice.ErrUnsupported, func(t *testing.T) error {
			_, err := tensor.NewFixedShapeType(i32, []int64{2, 0}, nil, nil)
			return err
		}),
		testsupport.Case("NewFixedShapeType/not a permutation", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := tensor.NewFixedShapeType(i32, []int64{2, 3}, []int64{0, 0}, nil)
			return err
		}),
		testsupport.Case("NewFixedShapeType/dim_names", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := tensor.NewFixedShapeType(i32, []int64{2, 3}, nil, []string{"x"})
			return err
		}),
		testsupport.Case("FromExtension/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := tensor.FromExtension(nil)
			return err
		}),
		testsupport.Case("Deserialize/malformed metadata", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := ok.Deserialize(ok.StorageType(), `{"shape": 3}`)
			return err
		}),
		testsupport.Case("Deserialize/storage not a fixed_size_list", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := ok.Deserialize(i32, `{"shape": [2, 3]}`)
			return err
		}),
		testsupport.Case("Deserialize/storage of another size", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := ok.Deserialize(arrow.FixedSizeListOf(5, i32), `{"shape": [2, 3]}`)
			return err
		}),
	})
}
