package ndarray

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/tensor"
)

// MaxDims bounds the dimensions, rows included, of the arrays made or taken.
const MaxDims = 64

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", cdevice.ErrInvalid, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", cdevice.ErrUnsupported, fmt.Sprintf(format, args...))
}

// A Level is a node type above the leaf: a fixed_size_list or an
// arrow.fixed_shape_tensor (any implementation), and its list size.
type Level struct {
	Type arrow.DataType
	Size int64
}

// A Layout is an Arrow type seen as an N-d array: rows along the first
// dimension, each row a dense tensor of one shape stored row-major in the
// order of its physical dimensions. Each fixed_size_list level adds one
// dimension, each fixed_shape_tensor level the dimensions of its shape,
// permuted as its permutation says.
type Layout struct {
	Type    arrow.DataType
	Levels  []Level        // root first
	Elem    arrow.DataType // the leaf type, which the caller checks
	Phys    []int64        // physical shape of a row, outermost first
	Logical []int          // logical dimension i of a row is Phys[Logical[i]]
	Row     int64          // elements per row: the product of Phys
}

// LayoutOf walks dt down to its leaf. Errors wrap cdevice.ErrInvalid (a
// malformed fixed shape tensor type) or cdevice.ErrUnsupported (too many
// dimensions or elements).
func LayoutOf(dt arrow.DataType) (*Layout, error) {
	if dt == nil {
		return nil, invalidf("nil type")
	}
	l := &Layout{Type: dt, Row: 1}
	for cur := dt; l.Elem == nil; {
		if len(l.Levels) >= MaxDims {
			return nil, unsupportedf("type %s: more than %d dimensions", dt, MaxDims)
		}
		var fsl *arrow.FixedSizeListType
		var dims, perm []int64
		switch t := cur.(type) {
		case *arrow.FixedSizeListType:
			fsl, dims = t, []int64{int64(t.Len())}
		case arrow.ExtensionType:
			if t.ExtensionName() == tensor.ExtensionName {
				tt, err := tensor.FromExtension(t)
				if err != nil {
					return nil, err
				}
				fsl, dims, perm = tt.StorageType().(*arrow.FixedSizeListType), tt.Shape(), tt.Permutation()
			}
		}
		if fsl == nil {
			l.Elem = cur
			break
		}
		base := len(l.Phys)
		for i := range dims {
			p := i
			if perm != nil {
				p = int(perm[i])
			}
			l.Logical = append(l.Logical, base+p)
		}
		l.Phys = append(l.Phys, dims...)
		l.Levels = append(l.Levels, Level{Type: cur, Size: int64(fsl.Len())})
		var ok bool
		if l.Row, ok = MulNonNeg(l.Row, int64(fsl.Len())); !ok {
			return nil, unsupportedf("type %s: too many elements per row", dt)
		}
		cur = fsl.Elem()
	}
	if len(l.Phys)+1 > MaxDims {
		return nil, unsupportedf("type %s: more than %d dimensions", dt, MaxDims)
	}
	return l, nil
}

// Chain is the types of the nodes from the root to the leaf.
func (l *Layout) Chain() []arrow.DataType {
	c := make([]arrow.DataType, 0, len(l.Levels)+1)
	for _, lv := range l.Levels {
		c = append(c, lv.Type)
	}
	return append(c, l.Elem)
}

// RowShape is the logical shape of a row.
func (l *Layout) RowShape() []int64 {
	s := make([]int64, len(l.Logical))
	for i, p := range l.Logical {
		s[i] = l.Phys[p]
	}
	return s
}

// Shape is the logical shape of rows rows: rows, then RowShape.
func (l *Layout) Shape(rows int64) []int64 { return append([]int64{rows}, l.RowShape()...) }

// Strides are the logical strides, in units of unit, of the physical
// row-major layout, rows first (see LogicalStrides).
func (l *Layout) Strides(unit int64) []int64 { return LogicalStrides(l.Phys, l.Logical, unit) }

// Permuted reports whether logical and physical dimensions differ in order.
func (l *Layout) Permuted() bool {
	for i, p := range l.Logical {
		if p != i {
			return true
		}
	}
	return false
}

// Elements is the number of leaf elements of rows rows; false when it
// overflows.
func (l *Layout) Elements(rows int64) (int64, bool) { return MulNonNeg(rows, l.Row) }

// Per is the number of leaf elements under one element of the node at
// level i (len(Levels) is the leaf: 1).
func (l *Layout) Per(i int) int64 {
	n := int64(1)
	for _, lv := range l.Levels[i:] {
		n *= lv.Size
	}
	return n
}

// Lengths are the lengths of the nodes from the root (rows) to the leaf.
func (l *Layout) Lengths(rows int64) []int64 {
	lens := []int64{rows}
	for _, lv := range l.Levels {
		lens = append(lens, lens[len(lens)-1]*lv.Size)
	}
	return lens
}

// Tree makes the DeviceArray tree of rows rows of l over leaf, whose
// buffers, offset, null count and device the caller sets: leaf gets l's
// leaf type and its length, and the list nodes above it (without validity)
// the leaf's device.
func (l *Layout) Tree(rows int64, leaf cdevice.DeviceArray) *cdevice.DeviceArray {
	lens, chain := l.Lengths(rows), l.Chain()
	leaf.Type, leaf.Length = l.Elem, lens[len(lens)-1]
	node := &leaf
	for i := len(l.Levels) - 1; i >= 0; i-- {
		node = &cdevice.DeviceArray{Type: chain[i], Length: lens[i], Buffers: []cdevice.DeviceBuffer{{}},
			Children:   []*cdevice.DeviceArray{node},
			DeviceType: leaf.DeviceType, DeviceID: leaf.DeviceID, Device: leaf.Device}
	}
	return node
}

// A Node is a node of a DeviceArray tree on the path from the root to the
// leaf, with Start, the index in the node (its own Offset included) of the
// first element that the root's elements cover.
type Node struct {
	*cdevice.DeviceArray
	Start int64
}

// Place follows a's tree along l: the root, the one child of each level,
// the leaf last. The buffers are the caller's to check. Errors wrap
// cdevice.ErrInvalid.
func (l *Layout) Place(a *cdevice.DeviceArray) ([]Node, error) {
	if a == nil {
		return nil, invalidf("nil DeviceArray")
	}
	if a.Length < 0 || a.Offset < 0 {
		return nil, invalidf("DeviceArray length %d, offset %d", a.Length, a.Offset)
	}
	nodes := []Node{{a, a.Offset}}
	for i, lv := range l.Levels {
		n := nodes[i]
		if len(n.Children) != 1 || n.Children[0] == nil {
			return nil, invalidf("a %s node has %d children, want 1", lv.Type, len(n.Children))
		}
		c := n.Children[0]
		start, ok := MulNonNeg(n.Start, lv.Size)
		if !ok || c.Offset < 0 || start > math.MaxInt64-c.Offset {
			return nil, invalidf("child offset %d of a %s node at %d overflows", c.Offset, lv.Type, n.Start)
		}
		nodes = append(nodes, Node{c, start + c.Offset})
	}
	return nodes, nil
}
