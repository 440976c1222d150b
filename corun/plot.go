package corun

import (
	"bytes"
	"fmt"
	"image/color"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// modeColors gives each mode one colour in every plot.
var modeColors = map[Mode]color.RGBA{
	Sequential: {0x7f, 0x7f, 0x7f, 0xff},
	Streams:    {0x8c, 0x56, 0x4b, 0xff},
	MPS:        {0xe3, 0x77, 0xc2, 0xff},
	Green:      {0x2c, 0xa0, 0x2c, 0xff},
	Static:     {0x1f, 0x77, 0xb4, 0xff},
	Scheduler:  {0xd6, 0x27, 0x28, 0xff},
	STM:        {0xff, 0x7f, 0x0e, 0xff},
	Oracle:     {0x00, 0x00, 0x00, 0xff},
}

var colorWhite = color.RGBA{0xff, 0xff, 0xff, 0xff}

var kernelColors = []color.RGBA{{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}}

// newPlot makes a plot with the report's title (the device and commit on a
// second line) and small legend text, so long workload names fit.
func newPlot(d *Document, title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title + "\n" + d.titleSuffix()
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	return p
}

func render(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (d *Document) titleSuffix() string {
	s := d.Device
	if d.Commit != "" {
		s += ", commit " + d.Commit
	}
	return s
}

// GainSVG draws the gain over sequential of every workload in every mode
// that ran (one bar group per workload; the mps bar is its best setting).
func GainSVG(d *Document) ([]byte, error) {
	var workloads []string
	gain := map[Mode]map[string]float64{}
	seen := map[string]bool{}
	for _, r := range d.Rows {
		if !seen[r.Workload] {
			seen[r.Workload] = true
			workloads = append(workloads, r.Workload)
		}
		if r.Mode == Sequential {
			continue
		}
		if gain[r.Mode] == nil {
			gain[r.Mode] = map[string]float64{}
		}
		if g, ok := gain[r.Mode][r.Workload]; !ok || r.Gain > g {
			gain[r.Mode][r.Workload] = r.Gain
		}
	}
	if len(gain) == 0 {
		return nil, fmt.Errorf("no co-running rows to draw (only sequential ran)")
	}
	var modes []Mode
	for _, m := range AllModes {
		if gain[m] != nil {
			modes = append(modes, m)
		}
	}
	p := newPlot(d, "Gain over sequential per workload")
	p.Y.Label.Text = "gain = 1 - makespan / sequential"
	p.Add(plotter.NewGrid())
	width := vg.Points(5)
	lo, hi := 0.0, 0.0
	for _, m := range modes {
		for _, g := range gain[m] {
			lo, hi = min(lo, g), max(hi, g)
		}
	}
	for i, m := range modes {
		vals := make(plotter.Values, len(workloads))
		for j, w := range workloads {
			vals[j] = gain[m][w]
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		b.Color = modeColors[m]
		b.LineStyle.Width = 0
		b.Offset = width * vg.Length(float64(i)-float64(len(modes)-1)/2)
		p.Add(b)
		p.Legend.Add(string(m), b)
	}
	labels := make([]string, len(workloads))
	for i, w := range workloads {
		labels[i] = strings.ReplaceAll(w, "+", "+\n")
	}
	p.NominalX(labels...)
	p.X.Tick.Label.Font.Size = vg.Points(6)
	p.X.Min, p.X.Max = -0.5, float64(len(workloads))-0.5
	// Room above the bars for the legend.
	p.Y.Min, p.Y.Max = lo-0.05*(hi-lo+0.01), hi+0.6*(hi-lo+0.01)
	w := max(7*vg.Inch, vg.Length(len(workloads)*len(modes))*width+vg.Inch)
	return render(p, w, 5*vg.Inch)
}

// SweepSVG draws a pair workload's SM-split sweeps: makespan against the
// first kernel's SMs for each swept mode (static, green, oracle), the
// sequential and streams makespans as references, the oracle's best split
// and the split the scheduler's planner (stm) chose marked.
func SweepSVG(d *Document, workload string) ([]byte, error) {
	var seq, streams float64
	var stmSplit string
	var stmMs float64
	for _, r := range d.Rows {
		if r.Workload != workload {
			continue
		}
		switch r.Mode {
		case Sequential:
			seq = r.MakespanMs
		case Streams:
			streams = r.MakespanMs
		case STM:
			stmSplit, stmMs = r.Split, r.MakespanMs
		}
	}
	p := newPlot(d, workload+": SM-split sweep")
	p.X.Label.Text = "SMs of the first kernel (the second has the rest)"
	p.Y.Label.Text = "makespan (ms)"
	p.Add(plotter.NewGrid())
	found := false
	xMax := float64(d.SMs)
	yMax := max(seq, streams)
	for _, s := range d.Sweeps {
		if s.Workload != workload {
			continue
		}
		var xys plotter.XYs
		var best plotter.XYs
		for _, pt := range s.Points {
			a, err := firstOfSplit(pt.Split, 2)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", workload, s.Mode, err)
			}
			xys = append(xys, plotter.XY{X: float64(a), Y: pt.MakespanMs})
			yMax = max(yMax, pt.MakespanMs)
			if pt.Split == s.Best {
				best = append(best, plotter.XY{X: float64(a), Y: pt.MakespanMs})
			}
		}
		found = true
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		c := modeColors[s.Mode]
		l.Color, pts.Color = c, c
		pts.Shape = draw.CircleGlyph{}
		pts.Radius = vg.Points(1.5)
		p.Add(l, pts)
		p.Legend.Add(fmt.Sprintf("%s (best %s)", s.Mode, s.Best), l, pts)
		if s.Mode == Oracle && len(best) > 0 {
			m, err := plotter.NewScatter(best)
			if err != nil {
				return nil, err
			}
			m.Shape = draw.PyramidGlyph{}
			m.Radius = vg.Points(5)
			m.Color = c
			p.Add(m)
			p.Legend.Add(fmt.Sprintf("oracle best %s: %.4g ms", s.Best, best[0].Y), m)
		}
	}
	if !found {
		return nil, fmt.Errorf("workload %s has no sweep (static, green or oracle on a pair)", workload)
	}
	if stmSplit != "" {
		if a, err := firstOfSplit(stmSplit, 2); err == nil {
			m, err := plotter.NewScatter(plotter.XYs{{X: float64(a), Y: stmMs}})
			if err != nil {
				return nil, err
			}
			m.Shape = draw.BoxGlyph{}
			m.Radius = vg.Points(4)
			m.Color = modeColors[STM]
			p.Add(m)
			p.Legend.Add(fmt.Sprintf("chosen by the planner (stm) %s: %.4g ms", stmSplit, stmMs), m)
		}
	}
	ref := func(y float64, label string, c color.RGBA, dashes []vg.Length) error {
		if y <= 0 {
			return nil
		}
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: xMax, Y: y}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = c, dashes
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%.4g ms)", label, y), l)
		return nil
	}
	if err := ref(seq, "sequential", modeColors[Sequential], nil); err != nil {
		return nil, err
	}
	if err := ref(streams, "streams", modeColors[Streams], []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 0, xMax
	p.Y.Min, p.Y.Max = 0, 1.6*yMax // room above for the legend
	return render(p, 7*vg.Inch, 4.5*vg.Inch)
}

// firstOfSplit reads the first kernel's SMs of an "A:B" split of n parts.
func firstOfSplit(s string, n int) (int, error) {
	parts := strings.Split(s, ":")
	if len(parts) != n {
		return 0, fmt.Errorf("split %q does not have %d parts", s, n)
	}
	a, err := strconv.Atoi(parts[0])
	if err != nil || a < 1 {
		return 0, fmt.Errorf("split %q: bad SM count", s)
	}
	return a, nil
}

// GanttSVG draws one scheduler run: each kernel's SM range over time, one
// rectangle per range it held (a resize starts a new one).
func GanttSVG(d *Document, workload string) ([]byte, error) {
	var g *Gantt
	for i := range d.Gantts {
		if d.Gantts[i].Workload == workload {
			g = &d.Gantts[i]
		}
	}
	if g == nil {
		return nil, fmt.Errorf("workload %s has no scheduler run to draw", workload)
	}
	p := newPlot(d, "Scheduler run of "+workload)
	p.X.Label.Text = "time (ms)"
	p.Y.Label.Text = "SM"
	var kernels []string
	color := map[string]color.RGBA{}
	tMax := 0.0
	for _, s := range g.Segments {
		if _, ok := color[s.Kernel]; !ok {
			color[s.Kernel] = kernelColors[len(kernels)%len(kernelColors)]
			kernels = append(kernels, s.Kernel)
		}
		tMax = max(tMax, s.EndMs)
	}
	legend := map[string]bool{}
	for _, s := range g.Segments {
		poly, err := plotter.NewPolygon(plotter.XYs{
			{X: s.StartMs, Y: float64(s.SMLow)}, {X: s.EndMs, Y: float64(s.SMLow)},
			{X: s.EndMs, Y: float64(s.SMHigh + 1)}, {X: s.StartMs, Y: float64(s.SMHigh + 1)},
		})
		if err != nil {
			return nil, err
		}
		c := color[s.Kernel]
		poly.Color = c
		// A white outline shows where a resize split a kernel's time.
		poly.LineStyle.Color = colorWhite
		poly.LineStyle.Width = vg.Points(0.5)
		p.Add(poly)
		if !legend[s.Kernel] {
			legend[s.Kernel] = true
			p.Legend.Add(s.Kernel, poly)
		}
	}
	p.X.Min, p.X.Max = 0, tMax*1.02
	p.Y.Min, p.Y.Max = 0, 1.3*float64(d.SMs) // room above for the legend
	p.Legend.Left = false
	return render(p, 7*vg.Inch, 4*vg.Inch)
}

// Plots renders the report's plots: gain.svg, a sweep per pair workload
// with a sweep (sweep-<workload>.svg), and the Gantt of one scheduler run
// (gantt.svg, see ganttWorkload). The map's keys are file names.
func Plots(d *Document) (map[string][]byte, error) {
	out := map[string][]byte{}
	g, err := GainSVG(d)
	if err != nil {
		return nil, err
	}
	out["gain.svg"] = g
	done := map[string]bool{}
	for _, s := range d.Sweeps {
		if done[s.Workload] || strings.Count(s.Workload, "+") != 1 {
			continue
		}
		done[s.Workload] = true
		svg, err := SweepSVG(d, s.Workload)
		if err != nil {
			return nil, err
		}
		out["sweep-"+strings.ReplaceAll(s.Workload, "+", "-")+".svg"] = svg
	}
	if len(d.Gantts) > 0 {
		svg, err := GanttSVG(d, ganttWorkload(d))
		if err != nil {
			return nil, err
		}
		out["gantt.svg"] = svg
	}
	return out, nil
}

// ganttWorkload picks the scheduler run to draw: the first complementary
// workload whose run resized a kernel (co-running happened), else the
// first complementary one, else the first.
func ganttWorkload(d *Document) string {
	resized := map[string]bool{}
	comp := map[string]bool{}
	for _, r := range d.Rows {
		comp[r.Workload] = r.Complementary
		if r.Mode == Scheduler && r.Resizes > 0 {
			resized[r.Workload] = true
		}
	}
	for _, g := range d.Gantts {
		if comp[g.Workload] && resized[g.Workload] {
			return g.Workload
		}
	}
	for _, g := range d.Gantts {
		if comp[g.Workload] {
			return g.Workload
		}
	}
	return d.Gantts[0].Workload
}
