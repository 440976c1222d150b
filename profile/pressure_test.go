package profile

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Invert reads a probe slowdown back off the stream's curve: linearly
// between points, from (0, 1), monotone, past the last point on the last
// rising slope up to twice its bandwidth.
func TestPressureCalibrationInvert(t *testing.T) {
	cal := PressureCalibration{{StreamGBs: 800, Slowdown: 2.4}, {StreamGBs: 1500, Slowdown: 3.0}, {StreamGBs: 3000, Slowdown: 9.0}}
	for _, c := range []struct {
		slow, want float64
	}{
		{0.98, 0},
		{1, 0},
		{1.7, 400},
		{2.4, 800},
		{2.7, 1150},
		{6, 2250},
		{9, 3000},
		{12, 3750},
		{100, 6000}, // capped at twice the last point
	} {
		assert.InDelta(t, c.want, cal.Invert(c.slow), 1e-9, "slowdown %v", c.slow)
	}
	// Unsorted points and a dip (noise) read as the monotone curve.
	dip := PressureCalibration{{StreamGBs: 3000, Slowdown: 9.0}, {StreamGBs: 1500, Slowdown: 2.2}, {StreamGBs: 800, Slowdown: 2.4}}
	assert.InDelta(t, 800.0, dip.Invert(2.4), 1e-9)
	assert.InDelta(t, 1500+1500*(3.0-2.4)/(9.0-2.4), dip.Invert(3.0), 1e-9, "flat from 800 to 1500 GB/s, then rising")
	// A curve that never rises: the probe does not see the stream.
	flat := PressureCalibration{{StreamGBs: 800, Slowdown: 1}, {StreamGBs: 3000, Slowdown: 0.99}}
	assert.InDelta(t, 3000.0, flat.Invert(1.2), 1e-9)
}

// pressureTarget answers ProbeRate from a model: the probe's pace alone,
// and its slowdown beside the stream (by the stream's bandwidth, 100 GB/s
// an SM, through curve) and beside the kernel (kernelSlow).
type pressureTarget struct {
	loadedTarget
	curve      PressureCalibration
	kernelSlow float64
	fail       error
	calls      []ProbeLoad
	probes     []int
}

func (t *pressureTarget) ProbeRate(ctx context.Context, probe int, load ProbeLoad, window time.Duration) (float64, error) {
	t.calls = append(t.calls, load)
	t.probes = append(t.probes, probe)
	if window <= 0 {
		return 0, fmt.Errorf("window %v", window)
	}
	const alone = 1e6
	// Drift that alternation cancels: each call a little slower.
	drift := 1 - 1e-4*float64(len(t.calls))
	switch {
	case load.Kernel:
		if t.fail != nil {
			return 0, t.fail
		}
		return drift * alone / t.kernelSlow, nil
	case load.Stream > 0:
		gbs, _ := t.StreamGBs(ctx, load.Stream)
		slow := 1.0
		x0, y0 := 0.0, 1.0
		for _, p := range t.curve {
			if gbs <= p.StreamGBs {
				slow = y0 + (p.Slowdown-y0)*(gbs-x0)/(p.StreamGBs-x0)
				break
			}
			x0, y0, slow = p.StreamGBs, p.Slowdown, p.Slowdown
		}
		return drift * alone / slow, nil
	}
	return drift * alone, nil
}

type pressureDevice struct {
	*fakeDevice
	curve      PressureCalibration
	kernelSlow float64
	fail       error
	tgt        *pressureTarget
}

func (d *pressureDevice) Load(ctx context.Context, k *Prepared, l Launch, args []Bound) (Target, error) {
	t, err := d.fakeDevice.Load(ctx, k, l, args)
	if err != nil {
		return nil, err
	}
	d.tgt = &pressureTarget{loadedTarget: loadedTarget{fakeTarget: *t.(*fakeTarget), factor: 2}, curve: d.curve, kernelSlow: d.kernelSlow, fail: d.fail}
	return d.tgt, nil
}

// With DRAMSensitivity, a target that can run the latency probe gets its
// dram_pressure: the probe alone, beside the kernel on all SMs but the
// probe's and beside the stream on four SM counts (the last every SM the
// probe leaves), in rounds; the kernel's slowdown of the probe read back
// off the stream's curve, and a note that says so. A failure beside the
// kernel fails the profile.
func TestProfileDRAMPressure(t *testing.T) {
	// The fake stream moves 100 GB/s an SM: 800, 1600, 6600 and 13000 GB/s.
	curve := PressureCalibration{{StreamGBs: 1000, Slowdown: 2}, {StreamGBs: 10000, Slowdown: 5}, {StreamGBs: 20000, Slowdown: 6}}
	fake := newFake(memBound(65536*3072, 110, 4400))
	dev := &pressureDevice{fakeDevice: fake, curve: curve, kernelSlow: 1.5}
	req := triadRequest(t, triadSpec)
	req.DRAMSensitivity = true
	res, err := Profile(context.Background(), dev, req)
	require.NoError(t, err)
	require.NoError(t, res.Set.Validate())
	got := res.Kernel().DRAMPressure
	require.NotNil(t, got)
	assert.Equal(t, 130, got.SMs)
	assert.InDelta(t, 500, got.StreamGBs, 1, "1.5x is half way from (0, 1) to (1000, 2)")
	require.Len(t, dev.tgt.calls, 5*6, "5 rounds of alone, the kernel and 4 stream loads")
	assert.Equal(t, []ProbeLoad{{}, {Kernel: true}, {Stream: 8}, {Stream: 16}, {Stream: 66}, {Stream: 130}}, dev.tgt.calls[:6])
	for _, p := range dev.tgt.probes {
		assert.Equal(t, probeSMs, p)
	}
	assert.Contains(t, res.Notes[len(res.Notes)-1], "dram_pressure: on 130 SMs the kernel slowed a latency probe 1.500x")

	// Not asked: nothing measured.
	dev = &pressureDevice{fakeDevice: newFake(memBound(65536*3072, 110, 4400)), curve: curve, kernelSlow: 1.5}
	req.DRAMSensitivity = false
	res, err = Profile(context.Background(), dev, req)
	require.NoError(t, err)
	assert.Nil(t, res.Kernel().DRAMPressure)
	assert.Empty(t, dev.tgt.calls)

	dev = &pressureDevice{fakeDevice: newFake(memBound(65536*3072, 110, 4400)), curve: curve, kernelSlow: 1.5, fail: errors.New("launch failed")}
	req.DRAMSensitivity = true
	_, err = Profile(context.Background(), dev, req)
	assert.ErrorContains(t, err, "dram_pressure, beside the kernel: launch failed")
}

// A device too small to leave the kernel SMs beside the probe is an error
// from dramPressure (Profile does not ask it).
func TestDRAMPressureNeedsSMs(t *testing.T) {
	_, _, _, err := dramPressure(context.Background(), &pressureTarget{}, probeSMs, 1)
	assert.ErrorContains(t, err, "needs more than")
	assert.Equal(t, []int{8, 16, 66, 130}, pressureStreams(132))
	assert.Equal(t, []int{2}, pressureStreams(4), "the half of 4 SMs is 2, its eighth and quarter none, and every SM but the probe's is the same 2")
}
