package profile

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/plan"
)

var (
	measuredColor = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	referenceGray = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}
)

// PlotSVG draws a kernel's profile the way the Slate paper's Fig. 1 does:
// the speedup R[1]/R[m] over m (top) against the ideal linear speedup, and
// the achieved bandwidth B[m] (bottom) against the device's peak. Where the
// speedup flattens, extra SMs buy nothing: those are the SMs a co-running
// kernel can have for free. R[1] comes from plan's interpolation when m = 1
// was not measured (perfect scaling below the smallest measured count).
func PlotSVG(dev plan.Device, k *plan.Kernel) ([]byte, error) {
	if len(k.RMs) == 0 {
		return nil, fmt.Errorf("kernel %s has no measurements to plot", k.Name)
	}
	r1 := k.R(1)
	var speed, bw plotter.XYs
	maxSpeed, maxBW := 1.0, 0.0
	for _, s := range k.RMs {
		sp := r1 / s.V
		speed = append(speed, plotter.XY{X: float64(s.M), Y: sp})
		maxSpeed = max(maxSpeed, sp)
	}
	for _, s := range k.BWGBs {
		bw = append(bw, plotter.XY{X: float64(s.M), Y: s.V})
		maxBW = max(maxBW, s.V)
	}
	xMax := float64(max(dev.SMs, 1))

	top := plot.New()
	top.Title.Text = fmt.Sprintf("%s on %s: speedup R[1]/R[m]", k.Name, dev.Name)
	top.X.Label.Text = "SMs (m)"
	top.Y.Label.Text = "speedup"
	top.X.Min, top.X.Max = 0, xMax
	top.Y.Min, top.Y.Max = 0, maxSpeed*1.1
	top.Add(plotter.NewGrid())
	ideal, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: xMax, Y: xMax}})
	if err != nil {
		return nil, err
	}
	ideal.Color = referenceGray
	ideal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	top.Add(ideal)
	top.Legend.Add("ideal (m)", ideal)
	if err := addMeasured(top, speed, "measured"); err != nil {
		return nil, err
	}
	// Top left, text after the samples: the curves rise from the bottom
	// left, and left-aligned text stays clear of the samples even where a
	// viewer substitutes a wider font for Liberation.
	top.Legend.Top, top.Legend.Left = true, true
	top.Legend.XOffs = vg.Points(8)
	// After the lines: Add widens the axes to the ideal line's range, and
	// a saturating curve must not be squashed under it.
	top.Y.Min, top.Y.Max = 0, maxSpeed*1.15
	top.Y.Tick.Marker = plainTicks{}

	bottom := plot.New()
	bottom.X.Label.Text = "SMs (m)"
	bottom.Y.Label.Text = "GB/s"
	bottom.X.Min, bottom.X.Max = 0, xMax
	bottom.Add(plotter.NewGrid())
	if maxBW > 0 {
		bottom.Title.Text = "DRAM bandwidth B[m]"
	} else {
		bottom.Title.Text = "DRAM bandwidth B[m]: not measured (profile with --bytes-per-block)"
	}
	if dev.PeakBWGBs > 0 {
		peak, err := plotter.NewLine(plotter.XYs{{X: 0, Y: dev.PeakBWGBs}, {X: xMax, Y: dev.PeakBWGBs}})
		if err != nil {
			return nil, err
		}
		peak.Color = referenceGray
		peak.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		bottom.Add(peak)
		bottom.Legend.Add(fmt.Sprintf("peak %.0f GB/s", dev.PeakBWGBs), peak)
	}
	if maxBW > 0 {
		if err := addMeasured(bottom, bw, "measured"); err != nil {
			return nil, err
		}
	}
	bottom.Legend.Top, bottom.Legend.Left = true, true
	bottom.Legend.XOffs, bottom.Legend.YOffs = vg.Points(8), -vg.Points(24) // under the peak line
	bottom.Y.Min, bottom.Y.Max = 0, max(dev.PeakBWGBs, maxBW)*1.08
	bottom.Y.Tick.Marker = plainTicks{}

	const w, h = 7 * vg.Inch, 8 * vg.Inch
	c := vgsvg.New(w, h)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(18)}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.New(c))
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("2500", not "2500.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// addMeasured adds a line with point markers.
func addMeasured(p *plot.Plot, xys plotter.XYs, label string) error {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color = measuredColor
	l.Width = vg.Points(1.5)
	s.Color = measuredColor
	s.Shape = draw.CircleGlyph{}
	s.Radius = vg.Points(2)
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return nil
}

// WritePlot writes PlotSVG's chart to path atomically (a temporary file
// renamed into place, so a viewer never shows half a chart); "-" writes
// to stdout.
func WritePlot(path string, dev plan.Device, k *plan.Kernel, stdout io.Writer) error {
	svg, err := PlotSVG(dev, k)
	if err != nil {
		return err
	}
	return emit.WriteFileAtomic(path, svg, stdout)
}
