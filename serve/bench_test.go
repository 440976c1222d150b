package serve_test

import (
	"testing"
	"time"

	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
)

// BenchmarkGrantRoundTrip is what a grant change costs between the daemon
// and a client over the real socket: a second client registers (the first
// is pushed a shrink), the first acks, the second leaves (a grow), the
// first acks. A launch itself costs no message in protocol v2.
func BenchmarkGrantRoundTrip(b *testing.B) {
	dir := b.TempDir()
	d, err := serve.New(serve.Config{Socket: dir + "/s.sock", SMs: testSMs, MPS: &serve.MPSState{Active: true}, Unplanned: serve.EqualShares, IdleAfter: -1})
	if err != nil {
		b.Fatal(err)
	}
	go d.Serve()
	defer d.Close()
	a, err := client.Connect(client.Options{Socket: dir + "/s.sock", HandshakeTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ResetTimer()
	for range b.N {
		c, err := client.Connect(client.Options{Socket: dir + "/s.sock", HandshakeTimeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		g := <-a.Grants()
		a.Ack(g, g.Range, 0, 0)
		c.Abort()
		g = <-a.Grants()
		a.Ack(g, g.Range, 0, 0)
	}
}
