package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// synthetic is a small raw.tsv as compare.sh writes it: two
// configurations, udp with the 1024/1472 pair that sits close on the axis,
// three repetitions of C and Go at every size.
const synthetic = `impl	config	size	rep	iters	usec	mbps	raw
C	udp/dgram	1	1	1000	2.000	0.50	2.5
Go	udp/dgram	1	1	1000	2.800	0.36	3.5
C	udp/dgram	1	2	1000	2.200	0.45	2.5
Go	udp/dgram	1	2	1000	2.600	0.38	3.5
C	udp/dgram	1	3	1000	1.900	0.53	2.5
Go	udp/dgram	1	3	1000	3.100	0.32	3.5
C	udp/dgram	1024	1	1000	2.500	409.60	2.9
Go	udp/dgram	1024	1	1000	2.400	426.67	2.9
C	udp/dgram	1472	1	1000	3.000	490.67	3.3
Go	udp/dgram	1472	1	1000	4.500	327.11	4.9
C	tcp/msg	1	1	1000	4.000	0.25	4.4
Go	tcp/msg	1	1	1000	3.600	0.28	4.0
C	tcp/msg	1048576	1	20	350.000	2995.93	360
Go	tcp/msg	1048576	1	20	300.000	3495.25	310
`

func writeInput(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// svgTexts parses an SVG document to the end (failing on any XML error)
// and returns the character data of its <text> elements.
func svgTexts(t *testing.T, doc []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var texts []string
	var sawSVG bool
	depth, inText := 0, -1
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 && tok.Name.Local == "svg" {
				sawSVG = true
			}
			if tok.Name.Local == "text" {
				inText = depth
				texts = append(texts, "")
			}
		case xml.EndElement:
			if depth == inText {
				inText = -1
			}
			depth--
		case xml.CharData:
			if inText >= 0 {
				texts[len(texts)-1] += string(tok)
			}
		}
	}
	if !sawSVG || depth != 0 {
		t.Fatalf("not an SVG document (root <svg>: %v, depth at end %d)", sawSVG, depth)
	}
	return texts
}

func TestRenderSVGAndPNG(t *testing.T) {
	in := writeInput(t, "raw.tsv", synthetic)
	dir := t.TempDir()
	svgPath, pngPath := filepath.Join(dir, "compare.svg"), filepath.Join(dir, "compare.png")
	title := "fi_pingpong, C vs Go: testhost, 2026-01-02 03:04 UTC"
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"-o", svgPath, "-o", pngPath, "-title", title, in}, &stdout, &stderr); rc != 0 {
		t.Fatalf("run = %d, stderr: %s", rc, stderr.String())
	}
	for _, p := range []string{svgPath, pngPath} {
		if !strings.Contains(stdout.String(), "wrote "+p) {
			t.Errorf("stdout %q does not name %s", stdout.String(), p)
		}
	}

	doc, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("font-family:'Liberation Sans',Arial,")) {
		t.Error("SVG names no metric-compatible fallback for Liberation Sans")
	}
	texts := svgTexts(t, doc)
	want := []string{
		title, legendC, legendGo,
		latencyTitle("udp/dgram"), bandwidthTitle("udp/dgram"),
		latencyTitle("tcp/msg"), bandwidthTitle("tcp/msg"),
		"1K", "1472", "1M", // size ticks
		"1.40", // udp 1 B latency, medians: Go 2.8 / C 2.0
		"1.50", // udp 1472 B latency: 4.5 / 3.0
		"0.86", // tcp 1 MiB latency: 300 / 350
		"1.17", // tcp 1 MiB bandwidth: 3495.25 / 2995.93
	}
	for _, w := range want {
		if !slices.Contains(texts, w) {
			t.Errorf("SVG has no text %q; texts: %q", w, texts)
		}
	}

	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 600 {
		t.Errorf("PNG is %dx%d, want at least 800x600", b.Dx(), b.Dy())
	}
}

func TestCommaSeparatedWithoutMbps(t *testing.T) {
	in := writeInput(t, "raw.csv", "impl,config,size,usec\nC,tcp/msg,1000,4\nGo,tcp/msg,1000,2\n")
	s, err := readFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].mbps != 250 || s[1].mbps != 500 {
		t.Fatalf("samples = %+v, want mbps derived as size/usec (250, 500)", s)
	}
	out := filepath.Join(t.TempDir(), "c.svg")
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"-o", out, in}, &stdout, &stderr); rc != 0 {
		t.Fatalf("run = %d, stderr: %s", rc, stderr.String())
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, doc)
	for _, w := range []string{latencyTitle("tcp/msg"), bandwidthTitle("tcp/msg"), "0.50", "2.00"} {
		if !slices.Contains(texts, w) {
			t.Errorf("SVG has no text %q", w)
		}
	}
}

func TestMbpsFromUsec(t *testing.T) {
	// compare.sh's mbps column is rounded to two decimals (0.00 here);
	// the plot uses size/usec.
	s, err := readResults(strings.NewReader("impl\tconfig\tsize\tusec\tmbps\nC\tudp/dgram\t1\t470\t0.00\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].mbps != 1.0/470 {
		t.Fatalf("samples = %+v, want mbps 1/470", s)
	}
}

func TestMedianAsCompareSummary(t *testing.T) {
	for _, tc := range []struct {
		in            []float64
		med, min, max float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{5, 1, 3}, 3, 1, 5},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4}, // even count: mean of the middle two
	} {
		got := summarizeValues(tc.in)
		if got != (stats{tc.med, tc.min, tc.max}) {
			t.Errorf("summarizeValues(%v) = %+v, want median %v min %v max %v", tc.in, got, tc.med, tc.min, tc.max)
		}
	}
}

func TestSummarizeOrder(t *testing.T) {
	s, err := readResults(strings.NewReader(synthetic))
	if err != nil {
		t.Fatal(err)
	}
	cfgs := summarize(s)
	if len(cfgs) != 2 || cfgs[0].name != "udp/dgram" || cfgs[1].name != "tcp/msg" {
		t.Fatalf("configurations not in file order: %+v", cfgs)
	}
	if got := cfgs[0].sizes; !slices.Equal(got, []int{1, 1024, 1472}) {
		t.Errorf("udp sizes = %v", got)
	}
	if got := cfgs[0].impls; !slices.Equal(got, []string{"C", "Go"}) {
		t.Errorf("impls = %v, want C first", got)
	}
	p := cfgs[0].pts["Go"][0]
	if p.size != 1 || p.reps != 3 || p.usec != (stats{2.8, 2.6, 3.1}) {
		t.Errorf("Go udp 1 B = %+v, want 3 reps, median 2.8, range 2.6-3.1", p)
	}
}

func TestBadInput(t *testing.T) {
	for name, content := range map[string]string{
		"empty":          "",
		"no usec column": "impl\tconfig\tsize\nC\tudp/dgram\t1\n",
		"zero usec":      "impl\tconfig\tsize\tusec\nC\tudp/dgram\t1\t0\n",
		"bad size":       "impl\tconfig\tsize\tusec\nC\tudp/dgram\tx\t1\n",
		"short row":      "impl\tconfig\tsize\tusec\nC\tudp/dgram\n",
		"header only":    "impl\tconfig\tsize\tusec\n",
	} {
		t.Run(name, func(t *testing.T) {
			in := writeInput(t, "raw.tsv", content)
			out := filepath.Join(t.TempDir(), "c.svg")
			var stdout, stderr bytes.Buffer
			if rc := run([]string{"-o", out, in}, &stdout, &stderr); rc != 1 {
				t.Fatalf("run = %d, want 1; stderr: %s", rc, stderr.String())
			}
			if stderr.Len() == 0 {
				t.Error("no error message")
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output file left behind: %v", err)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	in := writeInput(t, "raw.tsv", synthetic)
	for _, args := range [][]string{
		{},                    // no input
		{"-o", "c.gif", in},   // unknown format
		{"-no-such-flag", in}, // unknown flag
		{"-o", "noextension", in},
	} {
		var stdout, stderr bytes.Buffer
		if rc := run(args, &stdout, &stderr); rc != 2 {
			t.Errorf("run(%q) = %d, want 2", args, rc)
		}
	}
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"-o", filepath.Join(t.TempDir(), "c.svg"), filepath.Join(t.TempDir(), "missing.tsv")}, &stdout, &stderr); rc != 1 {
		t.Errorf("missing input: run = %d, want 1", rc)
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var l []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return l
	}
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.15, 300, []string{"0.2", "0.5", "1", "2", "5", "10", "20", "50", "100", "200"}},
		{0.15, 3000, []string{"1", "10", "100", "1000"}}, // more than ten: powers of ten
		{1.5, 4.5, []string{"2", "3", "4"}},              // less than a decade: every digit
		{2, 25, []string{"2", "5", "10", "20"}},
	} {
		if got := labels(tc.lo, tc.hi); !slices.Equal(got, tc.want) {
			t.Errorf("labels(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := (logTicks{}).Ticks(0, 10); got != nil {
		t.Errorf("Ticks(0, 10) = %v, want none on a non-positive range", got)
	}
}

func TestSizeTicksStagger(t *testing.T) {
	got := sizeTicks([]int{1, 64, 1024, 1472, 4096, 1 << 20})
	var l []string
	for _, tk := range got {
		l = append(l, tk.Label)
	}
	want := []string{"1", "64", "1K", "\n1472", "4K", "1M"}
	if !slices.Equal(l, want) {
		t.Errorf("labels = %q, want %q", l, want)
	}
}
