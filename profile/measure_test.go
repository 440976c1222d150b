package profile

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5 * ms}, 5 * ms},
		{[]time.Duration{3 * ms, 1 * ms, 2 * ms}, 2 * ms},
		{[]time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, 2500 * time.Microsecond},
		{[]time.Duration{1 * ms, 100 * ms, 2 * ms, 2 * ms, 3 * ms}, 2 * ms}, // an outlier does not move it
		{[]time.Duration{1, 2}, 1},                                          // integer halves round down
	} {
		in := append([]time.Duration(nil), tc.in...)
		assert.Equal(t, tc.want, Median(tc.in), "%v", tc.in)
		assert.Equal(t, in, tc.in, "Median must not reorder its input")
	}
}

func TestBandwidth(t *testing.T) {
	for _, tc := range []struct {
		blocks, bpb int64
		t           time.Duration
		want        float64
	}{
		{65536, 3072, 50 * time.Microsecond, 65536 * 3072 / 50e-6 / 1e9},
		{1000, 1e6, time.Second, 1},
		{1000, 0, time.Second, 0},
		{0, 100, time.Second, 0},
		{1000, 100, 0, 0},
	} {
		assert.InDelta(t, tc.want, BandwidthGBs(tc.blocks, tc.bpb, tc.t), 1e-9*max(tc.want, 1), "%+v", tc)
	}
}

func TestRound(t *testing.T) {
	assert.Equal(t, 1.234568, round(1.2345678, 6))
	assert.Equal(t, 0.1, round(0.1000000000001, 6))
	assert.Equal(t, 4296.123, round(4296.1234999, 3))
	assert.Equal(t, 0.0, round(0, 3))
}

func TestMeasureWarmupRepsMedian(t *testing.T) {
	r := listRunner{
		1: {100 * ms, 10 * ms, 12 * ms, 11 * ms}, // a slow first (warm-up) run is ignored
		4: {50 * ms, 3 * ms, 2 * ms, 4 * ms},
	}
	var events []Event
	pts, err := Measure(context.Background(), r, []int{1, 4}, MeasureOptions{Reps: 3, Warmup: 1, Progress: func(e Event) { events = append(events, e) }})
	require.NoError(t, err)
	require.Len(t, pts, 2)
	assert.Equal(t, Point{M: 1, Times: []time.Duration{10 * ms, 12 * ms, 11 * ms}, Median: 11 * ms}, pts[0])
	assert.Equal(t, Point{M: 4, Times: []time.Duration{3 * ms, 2 * ms, 4 * ms}, Median: 3 * ms}, pts[1])
	assert.Equal(t, 11.0, pts[0].Ms())
	require.Len(t, events, 8, "one event per run, warm-up included")
	for i, e := range events {
		assert.Equal(t, i%4+1, e.Run)
		assert.Equal(t, 4, e.Runs)
		assert.Equal(t, 2, e.Count)
		assert.Equal(t, i/4, e.Index)
		if e.Run == 4 {
			require.NotNil(t, e.Point, "the last run of an m carries the point")
			assert.Equal(t, pts[e.Index], *e.Point)
		} else {
			assert.Nil(t, e.Point)
		}
	}
	assert.Equal(t, 100*ms, events[0].Time)
}

func TestMeasureErrors(t *testing.T) {
	_, err := Measure(context.Background(), listRunner{}, []int{1}, MeasureOptions{Reps: 0})
	assert.ErrorContains(t, err, "reps must be at least 1")
	_, err = Measure(context.Background(), listRunner{}, []int{1}, MeasureOptions{Reps: 1, Warmup: -1})
	assert.ErrorContains(t, err, "must not be negative")

	pts, err := Measure(context.Background(), listRunner{1: {ms, ms}, 2: {ms}}, []int{1, 2}, MeasureOptions{Reps: 2})
	assert.ErrorContains(t, err, "m = 2 SMs, run 2 of 2: no more runs")
	assert.Len(t, pts, 1, "points finished before the failure are returned")

	_, err = Measure(context.Background(), listRunner{1: {0}}, []int{1}, MeasureOptions{Reps: 1})
	assert.ErrorContains(t, err, "reported no GPU time")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Measure(ctx, listRunner{1: {ms}}, []int{1}, MeasureOptions{Reps: 1})
	assert.ErrorIs(t, err, context.Canceled)
}

type slowRunner struct{}

func (slowRunner) Run(ctx context.Context, _ int) (time.Duration, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

func TestMeasureRunTimeout(t *testing.T) {
	_, err := Measure(context.Background(), slowRunner{}, []int{3}, MeasureOptions{Reps: 1, RunTimeout: 10 * ms})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
	assert.Contains(t, err.Error(), "raise --timeout")
	assert.Contains(t, err.Error(), "m = 3 SMs")
}
