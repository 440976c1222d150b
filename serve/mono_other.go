//go:build !linux

package serve

// monoNanos is unknown here (0): acks carry no comparable receipt time.
func monoNanos() int64 { return 0 }
