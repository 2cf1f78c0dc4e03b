// Command plot draws the results of bench/compare.sh: one-way latency
// (usec/xfer) and bandwidth (MB/s) against message size, the C libfabric
// fi_pingpong and ours side by side, one row of panels per configuration
// (provider/endpoint), with the Go/C ratio of the medians over every size.
//
//	go run . [-o compare.svg] [-o compare.png] [-title text] raw.tsv [raw2.tsv ...]
//
// The input is compare.sh's raw.tsv (tab- or comma-separated, with a header
// naming at least the columns impl, config, size and usec; MB/s is
// size/usec, as compare.sh defines it). Files are pooled, as
// compare_summary.sh pools them. Every point is the median over the repetitions, the bar its range
// (min to max). The output format follows the extension: .svg, .png or .pdf.
//
// It is a module of its own so that the library module keeps depending on
// golang.org/x/sys alone.
package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var outs []string
	fs.Func("o", "output `file` (.svg, .png or .pdf); repeatable (default compare.svg)", func(s string) error {
		if _, err := formatOf(s); err != nil {
			return err
		}
		outs = append(outs, s)
		return nil
	})
	host, _ := os.Hostname()
	title := fs.String("title", "", "title (default: fi_pingpong C vs Go, host and date)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: plot [-o out.svg]... [-title text] raw.tsv...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if len(outs) == 0 {
		outs = []string{"compare.svg"}
	}
	if *title == "" {
		*title = fmt.Sprintf("fi_pingpong, C vs Go: %s, %s", host, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	}
	var samples []sample
	for _, name := range fs.Args() {
		s, err := readFile(name)
		if err != nil {
			fmt.Fprintln(stderr, "plot:", err)
			return 1
		}
		samples = append(samples, s...)
	}
	cfgs := summarize(samples)
	if len(cfgs) == 0 {
		fmt.Fprintln(stderr, "plot: no results in", strings.Join(fs.Args(), " "))
		return 1
	}
	for _, out := range outs {
		if err := writeFile(out, *title, cfgs); err != nil {
			fmt.Fprintln(stderr, "plot:", err)
			return 1
		}
		fmt.Fprintln(stdout, "wrote", out)
	}
	return 0
}

// sample is one row of raw.tsv: one repetition of one point.
type sample struct {
	impl, config string
	size         int
	usec, mbps   float64
}

func readFile(name string) ([]sample, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := readResults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// readResults reads compare.sh's raw results: a header line, then one row
// per repetition. The separator is a tab unless the header has none.
func readResults(r io.Reader) ([]sample, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	header, _, _ := strings.Cut(string(data), "\n")
	cr := csv.NewReader(strings.NewReader(string(data)))
	cr.Comma = '\t'
	if !strings.Contains(header, "\t") {
		cr.Comma = ','
	}
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("empty file (want a header naming impl, config, size and usec)")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	for _, need := range []string{"impl", "config", "size", "usec"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("header has no %q column (have %q)", need, rows[0])
		}
	}
	var out []sample
	for i, row := range rows[1:] {
		line := i + 2
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		field := func(name string) (string, error) {
			j := col[name]
			if j >= len(row) {
				return "", fmt.Errorf("line %d: no %s field", line, name)
			}
			return strings.TrimSpace(row[j]), nil
		}
		var s sample
		if s.impl, err = field("impl"); err != nil {
			return nil, err
		}
		if s.config, err = field("config"); err != nil {
			return nil, err
		}
		if s.impl == "" || s.config == "" {
			return nil, fmt.Errorf("line %d: empty impl or config", line)
		}
		v, err := field("size")
		if err != nil {
			return nil, err
		}
		if s.size, err = strconv.Atoi(v); err != nil || s.size <= 0 {
			return nil, fmt.Errorf("line %d: size %q is not a positive integer", line, v)
		}
		if v, err = field("usec"); err != nil {
			return nil, err
		}
		if s.usec, err = positive(v); err != nil {
			return nil, fmt.Errorf("line %d: usec: %w", line, err)
		}
		// MB/s is size/usec by compare.sh's definition; its mbps column
		// holds the same figure rounded to two decimals, which is too
		// coarse for small messages on a slow run (0.00, 0.01).
		s.mbps = float64(s.size) / s.usec
		out = append(out, s)
	}
	return out, nil
}

// positive parses a finite number > 0 (both axes are logarithmic).
func positive(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive number", s)
	}
	return v, nil
}

// stats summarizes the repetitions of one point.
type stats struct{ median, min, max float64 }

func summarizeValues(v []float64) stats {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	m := s[n/2]
	if n%2 == 0 {
		m = (s[n/2-1] + s[n/2]) / 2 // as compare_summary.sh
	}
	return stats{median: m, min: s[0], max: s[n-1]}
}

// point is one implementation at one size of one configuration.
type point struct {
	size       int
	reps       int
	usec, mbps stats
}

// configData is what one row of panels shows.
type configData struct {
	name  string
	sizes []int              // every size measured, ascending
	impls []string           // C and Go first, then any other in file order
	pts   map[string][]point // by impl, ascending size
}

// summarize groups samples by configuration (in file order), implementation
// and size.
func summarize(samples []sample) []configData {
	type key struct {
		impl string
		size int
	}
	var order []string
	byCfg := map[string]map[key][]sample{}
	for _, s := range samples {
		m := byCfg[s.config]
		if m == nil {
			m = map[key][]sample{}
			byCfg[s.config] = m
			order = append(order, s.config)
		}
		k := key{s.impl, s.size}
		m[k] = append(m[k], s)
	}
	var out []configData
	for _, name := range order {
		cd := configData{name: name, pts: map[string][]point{}}
		for k, ss := range byCfg[name] {
			u := make([]float64, len(ss))
			mb := make([]float64, len(ss))
			for i, s := range ss {
				u[i], mb[i] = s.usec, s.mbps
			}
			cd.pts[k.impl] = append(cd.pts[k.impl], point{
				size: k.size, reps: len(ss), usec: summarizeValues(u), mbps: summarizeValues(mb),
			})
			if !slices.Contains(cd.sizes, k.size) {
				cd.sizes = append(cd.sizes, k.size)
			}
		}
		slices.Sort(cd.sizes)
		for impl, pts := range cd.pts {
			slices.SortFunc(pts, func(a, b point) int { return a.size - b.size })
			cd.impls = append(cd.impls, impl)
		}
		slices.SortFunc(cd.impls, compareImpls)
		out = append(out, cd)
	}
	return out
}

// compareImpls orders implementations C, Go, then any other by name.
func compareImpls(a, b string) int {
	if ra, rb := implRank(a), implRank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

func implRank(impl string) int {
	switch impl {
	case "C":
		return 0
	case "Go":
		return 1
	}
	return 2
}

// Legend names of the implementations compare.sh writes.
const (
	legendC  = "C libfabric fi_pingpong"
	legendGo = "Go fi_pingpong (this module)"
)

func legendName(impl string) string {
	switch impl {
	case "C":
		return legendC
	case "Go":
		return legendGo
	}
	return impl
}

// Panel titles: one latency and one bandwidth panel per configuration.
func latencyTitle(cfg string) string   { return cfg + ": latency (usec/xfer, lower is better)" }
func bandwidthTitle(cfg string) string { return cfg + ": bandwidth (MB/s, higher is better)" }

// Series styles by implementation rank: C blue with circles, Go cyan (the
// Go gopher's colour, darkened) with triangles and a dashed line, any other
// grey with squares.
var (
	colors = []color.Color{
		color.RGBA{R: 0x1f, G: 0x4e, B: 0xa8, A: 0xff},
		color.RGBA{R: 0x00, G: 0x8f, B: 0xb0, A: 0xff},
		color.RGBA{R: 0x70, G: 0x70, B: 0x70, A: 0xff},
	}
	glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}}
	dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

	better = color.RGBA{R: 0x1a, G: 0x7f, B: 0x2e, A: 0xff}
	worse  = color.RGBA{R: 0xb0, G: 0x20, B: 0x20, A: 0xff}
)

// Page geometry.
const (
	pageWidth = 11 * vg.Inch
	rowHeight = 3.6 * vg.Inch
	header    = 1.1 * vg.Inch
	pngDPI    = 120
)

// seriesStyle is how one implementation is drawn, the same in every panel
// and in the legend.
func seriesStyle(impl string) (draw.LineStyle, draw.GlyphStyle) {
	i := implRank(impl)
	return draw.LineStyle{Color: colors[i], Width: vg.Points(1.6), Dashes: dashes[i]},
		draw.GlyphStyle{Color: colors[i], Shape: glyphs[i], Radius: vg.Points(3.2)}
}

// drawLegend draws one legend for the whole page, its entries side by side
// and centred on top, at y (their bottom).
func drawLegend(page draw.Canvas, y vg.Length, impls []string, fnt font.Font) {
	const gap = 28
	type entry struct {
		leg   plot.Legend
		width vg.Length
	}
	var entries []entry
	total := vg.Length(0)
	for _, impl := range impls {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Font = font.From(fnt, 10)
		l.ThumbnailWidth = vg.Points(28)
		ls, gs := seriesStyle(impl)
		l.Add(legendName(impl), &plotter.Line{LineStyle: ls}, &plotter.Scatter{GlyphStyle: gs})
		w := l.Rectangle(page).Size().X
		entries = append(entries, entry{l, w})
		total += w
	}
	total += vg.Points(gap) * vg.Length(len(entries)-1)
	x := page.Center().X - total/2
	for _, e := range entries {
		c := page
		c.Min = vg.Point{X: x, Y: y}
		c.Max = vg.Point{X: x + e.width + vg.Points(10), Y: y + vg.Points(14)}
		e.leg.Draw(c)
		x += e.width + vg.Points(gap)
	}
}

func formatOf(name string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".svg", ".png", ".pdf":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("%s: unknown output format %q (want .svg, .png or .pdf)", name, ext)
	}
}

func writeFile(name, title string, cfgs []configData) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
		}
	}()
	format, err := formatOf(name)
	if err != nil {
		return err
	}
	return render(f, format, title, cfgs)
}

// render draws the whole page: a title, a subtitle that says how to read
// it, and per configuration a latency and a bandwidth panel.
func render(w io.Writer, format, title string, cfgs []configData) error {
	if len(cfgs) == 0 {
		return errors.New("nothing to plot")
	}
	width, height := pageWidth, header+rowHeight*vg.Length(len(cfgs))
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}
	case "pdf":
		c = vgpdf.New(width, height)
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	page := draw.New(c)
	// An opaque background: viewers with a dark theme show SVG and PNG
	// transparency as black.
	page.SetColor(color.White)
	page.Fill(page.Rectangle.Path())

	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	reps := 0
	var impls []string
	rows := make([][]*plot.Plot, len(cfgs))
	for i, cd := range cfgs {
		for _, impl := range cd.impls {
			if !slices.Contains(impls, impl) {
				impls = append(impls, impl)
			}
		}
		lat, bw, err := panels(cd, sans)
		if err != nil {
			return err
		}
		rows[i] = []*plot.Plot{lat, bw}
		for _, pts := range cd.pts {
			for _, p := range pts {
				reps = max(reps, p.reps)
			}
		}
	}

	top := page.Max.Y - vg.Points(8)
	ts := text.Style{
		Color: color.Black, Font: font.From(bold(sans), 15),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
	}
	page.FillText(ts, vg.Point{X: page.Center().X, Y: top}, title)
	ts.Font = font.From(sans, 10)
	ts.Color = color.Gray{Y: 0x30}
	page.FillText(ts, vg.Point{X: page.Center().X, Y: top - vg.Points(21)},
		fmt.Sprintf("One-way latency (setup-corrected) and bandwidth against message size, both tools with identical arguments, interleaved.\n"+
			"Points: median of %d repetition(s); bars: min to max. Numbers: Go/C ratio of the medians (green: Go faster, red: C faster).", reps))
	slices.SortFunc(impls, compareImpls)
	drawLegend(page, top-vg.Points(66), impls, sans)

	// Panel titles are drawn here, in the tiles' top padding, rather than by
	// the plots: plot.Align moves each plot's top edge by its own glyphs, so
	// the plots' titles would not line up.
	const titleHeight = 18
	body := page
	body.Max.Y -= header
	tiles := draw.Tiles{
		Rows: len(cfgs), Cols: 2,
		PadTop: vg.Points(titleHeight), PadBottom: vg.Points(6), PadLeft: vg.Points(8), PadRight: vg.Points(12),
		PadX: vg.Points(28), PadY: vg.Points(18 + titleHeight),
	}
	canvases := plot.Align(rows, tiles, body)
	ts.Font = font.From(bold(sans), 12)
	ts.Color = color.Black
	for i, cd := range cfgs {
		for j, p := range rows[i] {
			p.Draw(canvases[i][j])
			tile := tiles.At(body, j, i)
			page.FillText(ts, vg.Point{X: tile.Center().X, Y: tile.Max.Y + vg.Points(titleHeight)},
				[]string{latencyTitle(cd.name), bandwidthTitle(cd.name)}[j])
		}
	}
	if format != "svg" {
		_, err := c.WriteTo(w)
		return err
	}
	// The SVG names the font the layout was measured with; viewers without
	// it get Arial or Helvetica, which have the same metrics, rather than a
	// wider default that pushes centred text off centre.
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	_, err := io.WriteString(w, strings.ReplaceAll(buf.String(),
		"font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	return err
}

func bold(f font.Font) font.Font {
	f.Weight = xfont.WeightBold
	return f
}

// panels builds the latency and the bandwidth plot of one configuration.
func panels(cd configData, fnt font.Font) (lat, bw *plot.Plot, err error) {
	lat, err = panel(cd, fnt, "usec/xfer (one way)", func(p point) stats { return p.usec }, false)
	if err != nil {
		return nil, nil, err
	}
	bw, err = panel(cd, fnt, "MB/s", func(p point) stats { return p.mbps }, true)
	if err != nil {
		return nil, nil, err
	}
	return lat, bw, nil
}

func panel(cd configData, fnt font.Font, ylabel string, val func(point) stats, higherBetter bool) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = "message size (bytes)"
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(fnt, 10)
		a.Tick.Label.Font = font.From(fnt, 9)
		a.Scale = plot.LogScale{}
	}
	p.X.Tick.Marker = sizeTicks(cd.sizes)
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, impl := range cd.impls {
		pts := cd.pts[impl]
		xys := make(plotter.XYs, len(pts))
		errs := make(plotter.YErrors, len(pts))
		for i, pt := range pts {
			s := val(pt)
			xys[i] = plotter.XY{X: float64(pt.size), Y: s.median}
			errs[i].Low, errs[i].High = s.median-s.min, s.max-s.median
			lo, hi = math.Min(lo, s.min), math.Max(hi, s.max)
		}
		line, marks, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.LineStyle, marks.GlyphStyle = seriesStyle(impl)
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return nil, err
		}
		bars.Color, bars.Width, bars.CapWidth = line.Color, vg.Points(1), vg.Points(6)
		p.Add(line, bars, marks)
	}

	// Go/C ratio of the medians above every size both measured. A label
	// close to its left neighbour (udp's 1024 and 1472) goes one line
	// above it, both over the higher of the two points, so that the two
	// stay apart.
	if c, g := cd.pts["C"], cd.pts["Go"]; len(c) > 0 && len(g) > 0 {
		type label struct {
			size  int
			y     float64
			text  string
			style text.Style
			upper bool
		}
		var labels []label
		for _, gp := range g {
			i := slices.IndexFunc(c, func(cp point) bool { return cp.size == gp.size })
			if i < 0 {
				continue
			}
			cs, gs := val(c[i]), val(gp)
			ratio := gs.median / cs.median
			goFaster := ratio <= 1
			if higherBetter {
				goFaster = ratio >= 1
			}
			col := worse
			if goFaster {
				col = better
			}
			l := label{
				size: gp.size, y: math.Max(cs.max, gs.max), text: strconv.FormatFloat(ratio, 'f', 2, 64),
				style: text.Style{
					Color: col, Font: font.From(bold(fnt), 9),
					XAlign: draw.XCenter, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler,
				},
			}
			if n := len(labels); n > 0 && !labels[n-1].upper && nearby(labels[n-1].size, l.size) {
				l.upper = true
				l.y = math.Max(l.y, labels[n-1].y)
				labels[n-1].y = l.y
			}
			labels = append(labels, l)
		}
		for _, upper := range []bool{false, true} {
			var xyl plotter.XYLabels
			var styles []text.Style
			for _, l := range labels {
				if l.upper == upper {
					xyl.XYs = append(xyl.XYs, plotter.XY{X: float64(l.size), Y: l.y})
					xyl.Labels = append(xyl.Labels, l.text)
					styles = append(styles, l.style)
				}
			}
			if len(styles) == 0 {
				continue
			}
			pl, err := plotter.NewLabels(xyl)
			if err != nil {
				return nil, err
			}
			pl.TextStyle = styles
			pl.Offset = vg.Point{Y: vg.Points(5)}
			if upper {
				pl.Offset.Y += vg.Points(11)
			}
			p.Add(pl)
		}
	}

	// Explicit ranges: room for the labels above and a margin at the ends
	// of the logarithmic axes (which also keeps a single point from making
	// an empty range).
	p.X.Min, p.X.Max = float64(cd.sizes[0])/2, float64(cd.sizes[len(cd.sizes)-1])*2
	p.Y.Min, p.Y.Max = lo/1.6, hi*2
	return p, nil
}

// sizeTicks labels the measured sizes (1K for 1024, 1M for 1048576); a
// label close to its left neighbour goes one line lower.
func sizeTicks(sizes []int) plot.ConstantTicks {
	t := make(plot.ConstantTicks, len(sizes))
	lowered := false
	for i, s := range sizes {
		t[i] = plot.Tick{Value: float64(s), Label: humanSize(s)}
		lowered = i > 0 && !lowered && nearby(sizes[i-1], s)
		if lowered {
			t[i].Label = "\n" + t[i].Label
		}
	}
	return t
}

// nearby reports whether two sizes sit so near on the logarithmic axis
// that their labels would overlap.
func nearby(a, b int) bool {
	return math.Abs(math.Log10(float64(b)/float64(a))) < 0.45
}

func humanSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "K"
	}
	return strconv.Itoa(n)
}

// logTicks labels a logarithmic axis at 1, 2 and 5 times the powers of ten,
// or at every digit when that gives fewer than three labels, or at the
// powers of ten alone when it gives more than ten, with unlabelled minor
// ticks at the other digits. plot.LogTicks labels powers of ten only, which
// leaves an axis spanning less than a decade without a number.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	type cand struct {
		v     float64
		digit int
		exp   int
	}
	var cs []cand
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for d := 1; d <= 9; d++ {
			v := float64(d) * math.Pow10(e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				cs = append(cs, cand{v, d, e})
			}
		}
	}
	count := func(keep []int) int {
		n := 0
		for _, c := range cs {
			if slices.Contains(keep, c.digit) {
				n++
			}
		}
		return n
	}
	keep := []int{1, 2, 5}
	switch n := count(keep); {
	case n < 3:
		keep = []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	case n > 10:
		keep = []int{1}
	}
	ticks := make([]plot.Tick, len(cs))
	for i, c := range cs {
		ticks[i].Value = c.v
		if slices.Contains(keep, c.digit) {
			ticks[i].Label = tickLabel(c.digit, c.exp)
		}
	}
	return ticks
}

// tickLabel writes digit*10^exp without binary rounding noise (0.3, not
// 0.30000000000000004).
func tickLabel(digit, exp int) string {
	if exp >= 0 {
		return strconv.Itoa(digit) + strings.Repeat("0", exp)
	}
	return "0." + strings.Repeat("0", -exp-1) + strconv.Itoa(digit)
}
