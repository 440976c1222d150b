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
		if n.Head != nil { // nil when dropped: ParseOptions.DropHeads
			out = append(out, n.Head)
		}
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

// EachChild calls fn for each direct child of n in the order of Children,
// without building the slice.
func EachChild(n Node, fn func(Node)) {
	if n == nil {
		return
	}
	if !eachFastChild(n, fn) {
		for _, c := range reflectChildren(n) {
			fn(c)
		}
	}
}

// Walk calls fn for n and, while fn returns true, for its descendants in
// source order.
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	if !eachFastChild(n, func(c Node) { Walk(c, fn) }) {
		for _, c := range reflectChildren(n) {
			Walk(c, fn)
		}
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
	ok := eachFastChild(n, func(c Node) { out = append(out, c) })
	return out, ok
}

// eachFastChild calls fn on each child of n, in field order, for the node
// types fastChildren knows; it reports false (and calls nothing) for the
// others. Walk uses it so that a walk allocates no child slices.
func eachFastChild(n Node, fn func(Node)) bool {
	switch n := n.(type) {
	case *Expr:
		for _, a := range n.List {
			fn(a)
		}
	case *AssignExpr:
		if n.Left != nil {
			fn(n.Left)
		}
		if n.Right != nil {
			fn(n.Right)
		}
	case *CondExpr:
		if n.Bin != nil {
			fn(n.Bin)
		}
		if n.Then != nil {
			fn(n.Then)
		}
		if n.Else != nil {
			fn(n.Else)
		}
	case *BinaryExpr:
		if n.First != nil {
			fn(n.First)
		}
		for _, r := range n.Rest {
			fn(r)
		}
	case *BinRHS:
		if n.X != nil {
			fn(n.X)
		}
	case *CastExpr:
		if n.Type != nil {
			fn(n.Type)
		}
		if n.Cast != nil {
			fn(n.Cast)
		}
		if n.Unary != nil {
			fn(n.Unary)
		}
	case *UnaryExpr:
		if n.Operand != nil {
			fn(n.Operand)
		}
		if n.Sizeof != nil {
			fn(n.Sizeof)
		}
		if n.New != nil {
			fn(n.New)
		}
		if n.Delete != nil {
			fn(n.Delete)
		}
		if n.Postfix != nil {
			fn(n.Postfix)
		}
	case *PostfixExpr:
		if n.X != nil {
			fn(n.X)
		}
		for _, o := range n.Ops {
			fn(o)
		}
	case *PostfixOp:
		if n.Index != nil {
			fn(n.Index)
		}
		if n.Call != nil {
			fn(n.Call)
		}
		if n.Member != nil {
			fn(n.Member)
		}
		for _, a := range n.Launch {
			fn(a)
		}
	case *CallArgs:
		for _, a := range n.Args {
			fn(a)
		}
	case *InitValue:
		if n.Brace != nil {
			fn(n.Brace)
		}
		if n.X != nil {
			fn(n.X)
		}
	case *Primary:
		if n.Paren != nil {
			fn(n.Paren)
		}
		if n.CppCast != nil {
			fn(n.CppCast)
		}
		if n.Lambda != nil {
			fn(n.Lambda)
		}
		if n.Brace != nil {
			fn(n.Brace)
		}
		if n.Name != nil {
			fn(n.Name)
		}
		if n.Constr != nil {
			fn(n.Constr)
		}
	case *QualName:
		for _, sg := range n.Segs {
			fn(sg)
		}
	case *ExprNameSeg:
		if n.Args != nil {
			fn(n.Args)
		}
	case *MemberAccess:
		if n.Args != nil {
			fn(n.Args)
		}
	case *Block:
		for _, st := range n.Stmts {
			fn(st)
		}
	case *ExprStmt:
		if n.X != nil {
			fn(n.X)
		}
	// Statements and declarations (TestFastChildrenMatchReflection checks
	// these against the reflective enumeration).
	case *IfStmt:
		if n.Init != nil {
			fn(n.Init)
		}
		if n.CondDecl != nil {
			fn(n.CondDecl)
		}
		if n.Cond != nil {
			fn(n.Cond)
		}
		if n.Then != nil {
			fn(n.Then)
		}
		if n.Else != nil {
			fn(n.Else)
		}
	case *ForStmt:
		if n.Init != nil {
			fn(n.Init)
		}
		if n.Cond != nil {
			fn(n.Cond)
		}
		if n.Post != nil {
			fn(n.Post)
		}
		if n.RangeDecl != nil {
			fn(n.RangeDecl)
		}
		if n.Range != nil {
			fn(n.Range)
		}
		if n.Body != nil {
			fn(n.Body)
		}
	case *WhileStmt:
		if n.Cond != nil {
			fn(n.Cond)
		}
		if n.Body != nil {
			fn(n.Body)
		}
	case *DoStmt:
		if n.Body != nil {
			fn(n.Body)
		}
		if n.Cond != nil {
			fn(n.Cond)
		}
	case *ReturnStmt:
		if n.Value != nil {
			fn(n.Value)
		}
		if n.Brace != nil {
			fn(n.Brace)
		}
	case *DeclStmt:
		if n.Specs != nil {
			fn(n.Specs)
		}
		for _, d := range n.Decls {
			if d != nil {
				fn(d)
			}
		}
	case *InitDeclarator:
		if n.Decl != nil {
			fn(n.Decl)
		}
		if n.Init != nil {
			fn(n.Init)
		}
	case *Declarator:
		for _, p := range n.Ptrs {
			if p != nil {
				fn(p)
			}
		}
		if n.Nested != nil {
			fn(n.Nested)
		}
		if n.Fn != nil {
			fn(n.Fn)
		}
		for _, a := range n.Arrays {
			if a != nil {
				fn(a)
			}
		}
	case *Initializer:
		if n.Assign != nil {
			fn(n.Assign)
		}
		if n.Brace != nil {
			fn(n.Brace)
		}
		for _, a := range n.Ctor {
			if a != nil {
				fn(a)
			}
		}
	case *DeclSpecs:
		for _, q := range n.Pre {
			if q != nil {
				fn(q)
			}
		}
		if n.Named != nil {
			fn(n.Named)
		}
		for _, w := range n.Post {
			if w != nil {
				fn(w)
			}
		}
	case *ArraySuffix:
		if n.Size != nil {
			fn(n.Size)
		}
	case *TypeRef:
		for _, sg := range n.Segs {
			if sg != nil {
				fn(sg)
			}
		}
	case *NameSeg:
		if n.Args != nil {
			fn(n.Args)
		}
	case *PtrOp, *CastType, *EmptyStmt, *BreakStmt, *ContinueStmt, *LabelStmt:
		// no children
	default:
		return false
	}
	return true
}
