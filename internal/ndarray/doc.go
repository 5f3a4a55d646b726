// Package ndarray is what packages dlpack and cai share about N-dimensional
// arrays over Arrow's fixed-size layouts: the N-d view of an Arrow type
// (fixed_size_lists and arrow.fixed_shape_tensor down to a leaf type) and of
// a DeviceArray tree of it, row-major and permuted strides, spans and
// strided copies, byte-boolean packing, and the canonical arrow.bool8 type.
//
// Strides are in any unit the caller chooses (elements or bytes), the same
// for every argument of a call; a copy's are in bytes.
package ndarray
