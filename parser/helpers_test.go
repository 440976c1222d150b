package parser

import "fmt"

func fmtT(v any) string { return fmt.Sprintf("%T", v) }
