package parser

import (
	"fmt"
	"io"
	"reflect"
	"sync"
)

var nodeType = reflect.TypeOf((*Node)(nil)).Elem()

// childFields caches, per struct type, the indices of fields that hold
// nodes (pointers to node structs, node interfaces, or slices of either).
var childFields sync.Map // reflect.Type -> []int

func fieldsOf(t reflect.Type) []int {
	if v, ok := childFields.Load(t); ok {
		return v.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Implements(nodeType) && ft.Kind() != reflect.Struct {
			idx = append(idx, i)
		}
	}
	childFields.Store(t, idx)
	return idx
}

// Children returns the direct child nodes of n in field order, which for
// every grammar struct is source order.
func Children(n Node) []Node {
	if out, ok := fastChildren(n); ok {
		return out
	}
	return reflectChildren(n)
}

// reflectChildren enumerates children through the struct fields.
func reflectChildren(n Node) []Node {
	var out []Node
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	v = v.Elem()
	if v.Kind() != reflect.Struct {
		return nil
	}
	switch n := n.(type) {
	case *File:
		for _, it := range n.Items {
			out = append(out, it)
		}
		return out
	case *FuncDef:
		// The body is captured raw by the top-level grammar and, for device
		// code, parsed separately: the parsed body stands in for the raw one.
		out = append(out, n.Head)
		if n.Body != nil {
			return append(out, n.Body)
		}
		return append(out, n.BodyRaw)
	}
	for _, i := range fieldsOf(v.Type()) {
		f := v.Field(i)
		if f.Kind() == reflect.Slice {
			for j := 0; j < f.Len(); j++ {
				if c, ok := asNode(f.Index(j)); ok {
					out = append(out, c)
				}
			}
			continue
		}
		if c, ok := asNode(f); ok {
			out = append(out, c)
		}
	}
	return out
}

func asNode(v reflect.Value) (Node, bool) {
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return nil, false
	}
	n, ok := v.Interface().(Node)
	return n, ok
}

// Walk calls fn for n and, while fn returns true, for its descendants in
// source order.
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range Children(n) {
		Walk(c, fn)
	}
}

// Span of a File is the whole source.
func (f *File) Span() Span { return Span{0, len(f.Src)} }

// Fprint prints the file from its syntax tree: each node is printed as its
// children with the source text between them. With no edits this gives the
// input back byte for byte, and doing so checks that every node's span is
// inside its parent's and after its previous sibling's.
func Fprint(w io.Writer, f *File) error {
	p := printer{w: w, src: f.Src}
	p.node(f)
	return p.err
}

type printer struct {
	w   io.Writer
	src []byte
	err error
}

func (p *printer) write(b []byte) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

func (p *printer) node(n Node) {
	s := n.Span()
	at := s.Start
	for _, c := range Children(n) {
		cs := c.Span()
		if cs.Len() == 0 {
			continue
		}
		if cs.Start < at || cs.End > s.End {
			if p.err == nil {
				p.err = fmt.Errorf("span of %T [%d,%d) is not inside its parent %T [%d,%d) after offset %d",
					c, cs.Start, cs.End, n, s.Start, s.End, at)
			}
			return
		}
		p.write(p.src[at:cs.Start])
		p.node(c)
		at = cs.End
	}
	p.write(p.src[at:s.End])
}

// fastChildren enumerates the children of the most frequent node types
// without reflection (the analyses walk every expression many times).
// The order is field order, as in Children.
func fastChildren(n Node) ([]Node, bool) {
	var out []Node
	add := func(c Node, ok bool) {
		if ok {
			out = append(out, c)
		}
	}
	switch n := n.(type) {
	case *Expr:
		out = make([]Node, 0, len(n.List))
		for _, a := range n.List {
			out = append(out, a)
		}
	case *AssignExpr:
		add(n.Left, n.Left != nil)
		add(n.Right, n.Right != nil)
	case *CondExpr:
		add(n.Bin, n.Bin != nil)
		add(n.Then, n.Then != nil)
		add(n.Else, n.Else != nil)
	case *BinaryExpr:
		out = make([]Node, 0, 1+len(n.Rest))
		add(n.First, n.First != nil)
		for _, r := range n.Rest {
			out = append(out, r)
		}
	case *BinRHS:
		add(n.X, n.X != nil)
	case *CastExpr:
		add(n.Type, n.Type != nil)
		add(n.Cast, n.Cast != nil)
		add(n.Unary, n.Unary != nil)
	case *UnaryExpr:
		add(n.Operand, n.Operand != nil)
		add(n.Sizeof, n.Sizeof != nil)
		add(n.New, n.New != nil)
		add(n.Delete, n.Delete != nil)
		add(n.Postfix, n.Postfix != nil)
	case *PostfixExpr:
		out = make([]Node, 0, 1+len(n.Ops))
		add(n.X, n.X != nil)
		for _, o := range n.Ops {
			out = append(out, o)
		}
	case *PostfixOp:
		add(n.Index, n.Index != nil)
		add(n.Call, n.Call != nil)
		add(n.Member, n.Member != nil)
		for _, a := range n.Launch {
			out = append(out, a)
		}
	case *CallArgs:
		out = make([]Node, 0, len(n.Args))
		for _, a := range n.Args {
			out = append(out, a)
		}
	case *InitValue:
		add(n.Brace, n.Brace != nil)
		add(n.X, n.X != nil)
	case *Primary:
		add(n.Paren, n.Paren != nil)
		add(n.CppCast, n.CppCast != nil)
		add(n.Lambda, n.Lambda != nil)
		add(n.Brace, n.Brace != nil)
		add(n.Name, n.Name != nil)
		add(n.Constr, n.Constr != nil)
	case *QualName:
		out = make([]Node, 0, len(n.Segs))
		for _, s := range n.Segs {
			out = append(out, s)
		}
	case *ExprNameSeg:
		add(n.Args, n.Args != nil)
	case *MemberAccess:
		add(n.Args, n.Args != nil)
	case *Block:
		out = make([]Node, 0, len(n.Stmts))
		for _, st := range n.Stmts {
			out = append(out, st)
		}
	case *ExprStmt:
		add(n.X, n.X != nil)
	default:
		return nil, false
	}
	return out, true
}
