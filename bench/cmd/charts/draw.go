package main

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// palette gives each implementation or series a fixed colour, so a name has
// the same colour in every chart.
var palette = map[string]color.Color{
	"chan":       rgb(0x7f7f7f),
	"ring":       rgb(0x1f77b4),
	"ring-batch": rgb(0x2ca02c),
	"boreaslite": rgb(0xd62728),
	"workiva":    rgb(0xff7f0e),
	"disruptor":  rgb(0x9467bd),
	"relay":      rgb(0x1f77b4),
	"rsyslog":    rgb(0x7f7f7f),
}

var extraColors = []color.Color{rgb(0x8c564b), rgb(0xe377c2), rgb(0x17becf), rgb(0xbcbd22)}

func colorOf(name string, i int) color.Color {
	if c, ok := palette[name]; ok {
		return c
	}
	return extraColors[i%len(extraColors)]
}

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// save writes p with its legend in a strip of legendW on the right. The SVG
// names Liberation Sans, whose metrics laid the text out, and then the fonts
// metric-compatible with it, so viewers without Liberation show the same
// layout.
func save(p *plot.Plot, w, h, legendW vg.Length, path string) error {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	legend := p.Legend
	p.Legend = plot.NewLegend() // drawn in its own strip below, not over the data
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	legend.Draw(draw.Crop(dc, w-legendW, 0, 0, -p.Title.TextStyle.Height(p.Title.Text)-2*p.Title.Padding))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	svg := strings.ReplaceAll(buf.String(), "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return os.WriteFile(path, []byte(svg), 0o644)
}

// ringImpls is the order of the implementations in the ring chart: the
// baseline first, then ours, then the peers. Others follow sorted.
var ringImpls = []string{"chan", "ring", "ring-batch", "boreaslite", "workiva", "disruptor"}

// drawRing draws ns per item of BenchmarkRingSPSC and BenchmarkRingMPSC, one
// group of bars per producer count, one bar per implementation.
func drawRing(in, out string) error {
	med, err := readGoBench(in, "ns/op")
	if err != nil {
		return err
	}
	// values[group][impl] = ns per item
	values := map[int]map[string]float64{}
	var impls []string
	for name, v := range med {
		producers, impl, ok := parseRingName(name)
		if !ok {
			continue
		}
		if values[producers] == nil {
			values[producers] = map[string]float64{}
		}
		values[producers][impl] = v
		if !slices.Contains(impls, impl) {
			impls = append(impls, impl)
		}
	}
	if len(values) == 0 {
		return fmt.Errorf("%s: no BenchmarkRingSPSC or BenchmarkRingMPSC results", in)
	}
	slices.SortFunc(impls, func(a, b string) int {
		ia, ib := slices.Index(ringImpls, a), slices.Index(ringImpls, b)
		if ia < 0 {
			ia = len(ringImpls)
		}
		if ib < 0 {
			ib = len(ringImpls)
		}
		return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
	})
	groups := make([]int, 0, len(values))
	for g := range values {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	labels := make([]string, len(groups))
	for i, g := range groups {
		switch g {
		case 0:
			labels[i] = "SPSC"
		case 1:
			labels[i] = "MPSC, 1 producer"
		default:
			labels[i] = fmt.Sprintf("MPSC, %d producers", g)
		}
	}

	p := plot.New()
	style(p, "ringbuffer: time per item, 64-byte items, capacity 1024 (lower is better)", "ns per item (median)")
	width := vg.Points(11)
	var maxV float64
	for i, impl := range impls {
		vs := make(plotter.Values, len(groups))
		for j, g := range groups {
			vs[j] = values[g][impl] // 0 (no bar) where the run lacks it
		}
		bc, err := plotter.NewBarChart(vs, width)
		if err != nil {
			return err
		}
		bc.Color = colorOf(impl, i)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-float64(len(impls)-1)/2) * width
		p.Add(bc)
		p.Legend.Add(impl, bc)
		maxV = math.Max(maxV, slices.Max(vs))
	}
	p.NominalX(labels...)
	p.X.Label.Text = "-cpu 2 on 2 vCPUs; medians, ± intervals in BENCHMARKS.md"
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Min = 0
	p.Y.Max = maxV * 1.05
	return save(p, 8*vg.Inch, 4*vg.Inch, 1.3*vg.Inch, out)
}

// parseRingName maps "RingSPSC/impl=X" to (0, X) and
// "RingMPSC/producers=N/impl=X" to (N, X).
func parseRingName(name string) (producers int, impl string, ok bool) {
	parts := strings.Split(name, "/")
	switch {
	case parts[0] == "RingSPSC" && len(parts) == 2:
		impl, ok = strings.CutPrefix(parts[1], "impl=")
		return 0, impl, ok
	case parts[0] == "RingMPSC" && len(parts) == 3:
		n, ok1 := strings.CutPrefix(parts[1], "producers=")
		impl, ok = strings.CutPrefix(parts[2], "impl=")
		p, err := strconv.Atoi(n)
		return p, impl, ok && ok1 && err == nil
	}
	return 0, "", false
}

// style sets the look shared by every chart.
func style(p *plot.Plot, title, ylabel string) {
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Marker = steps{}
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	p.Add(grid)
}

// drawRelay draws events per CPU-second of each relay run row of in, one
// bar per run and system (relay or rsyslog) in each scenario.
func drawRelay(in, out string) error {
	t, err := readTSV(in, "run", "scenario", "system", "setup", "kevents_per_cpu_s")
	if err != nil {
		return err
	}
	type row struct {
		label string
		run   string
		v     float64
	}
	var rows []row
	var labels, runs []string
	for i := range t.rows {
		v, err := t.num(i, "kevents_per_cpu_s")
		if err != nil {
			return err
		}
		label := fmt.Sprintf("(%s) %s: %s", t.str(i, "scenario"), t.str(i, "system"), t.str(i, "setup"))
		rows = append(rows, row{label, t.str(i, "run"), v})
		if !slices.Contains(labels, label) {
			labels = append(labels, label)
		}
		if !slices.Contains(runs, rows[len(rows)-1].run) {
			runs = append(runs, rows[len(rows)-1].run)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: no rows", in)
	}
	// Horizontal bars, first scenario at the top.
	slices.Reverse(labels)
	p := plot.New()
	style(p, "examples/relay end to end: events per CPU-second (higher is better)", "")
	p.X.Label.Text = "thousand events per CPU-second of the relay (or rsyslogd) process"
	p.X.Tick.Marker = steps{}
	height := vg.Points(10)
	runColors := []color.Color{rgb(0x1f77b4), rgb(0xaec7e8), rgb(0x08519c), rgb(0x6baed6)}
	var maxV float64
	for i, run := range runs {
		vs := make(plotter.Values, len(labels))
		var pts plotter.XYLabels
		for _, r := range rows {
			if r.run != run {
				continue
			}
			j := slices.Index(labels, r.label)
			vs[j] = r.v
			maxV = math.Max(maxV, r.v)
			pts.XYs = append(pts.XYs, plotter.XY{X: r.v, Y: float64(j)})
			pts.Labels = append(pts.Labels, fmt.Sprintf(" %.0f k", r.v))
		}
		bc, err := plotter.NewBarChart(vs, height)
		if err != nil {
			return err
		}
		bc.Horizontal = true
		bc.Color = runColors[i%len(runColors)]
		bc.LineStyle.Width = 0
		off := vg.Length(float64(len(runs)-1)/2-float64(i)) * height
		bc.Offset = off
		p.Add(bc)
		p.Legend.Add(run, bc)
		lb, err := plotter.NewLabels(pts)
		if err != nil {
			return err
		}
		for k := range lb.TextStyle {
			lb.TextStyle[k].Font.Size = vg.Points(8)
			lb.TextStyle[k].YAlign = draw.YCenter
		}
		lb.Offset = vg.Point{Y: off}
		p.Add(lb)
	}
	p.NominalY(labels...)
	// Room between the scenario names and the bars, for viewers whose
	// fallback font is wider than Liberation Sans.
	p.Y.Padding = vg.Points(30)
	p.X.Min = 0
	p.X.Max = maxV * 1.12
	return save(p, 9*vg.Inch, 4*vg.Inch, 1.5*vg.Inch, out)
}

// drawOutage draws the outage timeline: events received and delivered
// (cumulative) and the spool backlog against time, with the outage shaded.
func drawOutage(in, out string) error {
	t, err := readTSV(in, "t_s", "in", "delivered", "spool_backlog")
	if err != nil {
		return err
	}
	if len(t.rows) == 0 {
		return fmt.Errorf("%s: no rows", in)
	}
	series := []struct {
		col, name string
		c         color.Color
		dashed    bool
	}{
		{"in", "events in (cumulative)", rgb(0x7f7f7f), false},
		{"delivered", "delivered (cumulative)", rgb(0x1f77b4), false},
		{"spool_backlog", "spool backlog (events)", rgb(0xd62728), true},
	}
	p := plot.New()
	style(p, "examples/relay during a destination outage", "events")
	p.X.Label.Text = "seconds since the load started"
	p.X.Tick.Marker = steps{}
	p.Y.Min = 0
	lines := make([]plotter.XYs, len(series))
	var ymax float64
	for k, s := range series {
		xy := make(plotter.XYs, len(t.rows))
		for i := range t.rows {
			x, err := t.num(i, "t_s")
			if err != nil {
				return err
			}
			y, err := t.num(i, s.col)
			if err != nil {
				return err
			}
			xy[i] = plotter.XY{X: x, Y: y}
			ymax = math.Max(ymax, y)
		}
		lines[k] = xy
	}
	// The outage windows first, so the lines are drawn over them.
	var windows []*plotter.Polygon
	for _, c := range t.comments {
		rest, ok := strings.CutPrefix(c, "outage:")
		if !ok {
			continue
		}
		var from, to float64
		if _, err := fmt.Sscan(rest, &from, &to); err != nil || to < from {
			return fmt.Errorf("%s: want \"# outage: FROM TO\" in seconds, got %q", in, c)
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: 0}, {X: to, Y: 0}, {X: to, Y: ymax}, {X: from, Y: ymax}})
		if err != nil {
			return err
		}
		poly.Color = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x30}
		poly.LineStyle.Width = 0
		p.Add(poly)
		windows = append(windows, poly)
	}
	for k, s := range series {
		l, err := plotter.NewLine(lines[k])
		if err != nil {
			return err
		}
		l.Color = s.c
		l.Width = vg.Points(1.5)
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	if len(windows) > 0 {
		p.Legend.Add("destination down", windows[0])
	}
	return save(p, 9*vg.Inch, 4*vg.Inch, 2.2*vg.Inch, out)
}

// steps places about eight ticks at a round step (1, 2 or 5 times a power
// of ten), more than plot.DefaultTicks, so bars can be read off the grid.
type steps struct{}

func (steps) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 8
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow * 10
	for _, m := range []float64{1, 2, 5} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}
