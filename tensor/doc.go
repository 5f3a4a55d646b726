// Package tensor is the canonical arrow.fixed_shape_tensor extension type,
// which arrow-go v18 lacks.
//
// Every element of an array of a FixedShapeType is a tensor of one shape,
// stored as a fixed_size_list<value_type, product of shape> in row-major
// order of the physical shape. Two optional parameters describe the
// logical layout (Arrow's canonical extension specification):
//
//   - permutation: logical dimension i is physical dimension
//     permutation[i], so the logical shape is shape[permutation[0]],
//     shape[permutation[1]], ...; an identity permutation is the same as
//     none;
//   - dim_names: names of the physical dimensions.
//
// The serialized metadata is a JSON object with the key "shape" and
// optional "dim_names" and "permutation", e.g.
// {"shape":[100,200,500],"permutation":[2,0,1]} (logical shape
// [500,100,200]).
//
// The type is registered with arrow-go under its canonical name when this
// package is initialized, unless another implementation was registered
// first (a later arrow-go's, say). Code that reads tensors should accept
// any implementation: FromExtension reads one by its name and serialized
// metadata.
//
// Errors wrap cdevice.ErrInvalid (bad parameters or metadata) or
// cdevice.ErrUnsupported (a shape with no elements, which arrow-go's
// fixed_size_list cannot hold).
package tensor
