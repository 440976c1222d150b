package serve_test

import (
	"context"
	"testing"
	"time"

	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
)

// BenchmarkLaunchRoundTrip is what a served launch costs on the host: launch
// until start (the GPU idle), then done, over the real socket.
func BenchmarkLaunchRoundTrip(b *testing.B) {
	dir := b.TempDir()
	d, err := serve.New(serve.Config{Socket: dir + "/s.sock", SMs: testSMs, MPS: &serve.MPSState{Active: true}})
	if err != nil {
		b.Fatal(err)
	}
	go d.Serve()
	defer d.Close()
	c, err := client.Connect(client.Options{Socket: dir + "/s.sock", HandshakeTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	s := spec("k", "L_C")
	b.ResetTimer()
	for range b.N {
		l, err := c.Launch(ctx, s)
		if err != nil {
			b.Fatal(err)
		}
		l.Finish()
	}
}
