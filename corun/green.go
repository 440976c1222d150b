package corun

import "github.com/slatec/slatec/runtime"

// greenState is the CUDA device's green-context support.
type greenState struct {
	why string
}

func (g *greenState) probe(d *runtime.Device) {
	g.why = "green contexts are not wired into the runtime yet"
}

func (g *greenState) close() {}

// GreenGranularity implements GreenDevice.
func (d *CUDADevice) GreenGranularity() int { return 0 }

// GreenUnavailable implements GreenDevice.
func (d *CUDADevice) GreenUnavailable() string { return d.green.why }

// StartGreen implements GreenDevice.
func (d *CUDADevice) StartGreen(k *Kernel, parts []int, part int) (Job, error) {
	return nil, unavailable("%s", d.green.why)
}
