package main

import (
	"math"
	"strconv"
	"strings"
)

// sizeStr formats n in binary units as fi_pingpong's size_str does: the
// integer quotient by the largest unit (g, m, k) not above n, plus one
// truncated decimal when the quotient is below 10 and that decimal is not
// zero: 1472 -> "1.4k", 10000 -> "9.7k", 20000 -> "19k", 1048576 -> "1m".
func sizeStr(n uint64) string {
	var base uint64 = 1
	mag := ""
	switch {
	case n >= 1<<30:
		base, mag = 1<<30, "g"
	case n >= 1<<20:
		base, mag = 1<<20, "m"
	case n >= 1<<10:
		base, mag = 1<<10, "k"
	}
	q := n / base
	s := strconv.FormatUint(q, 10)
	if q < 10 {
		if frac := (n % base) * 10 / base; frac != 0 {
			s += "." + strconv.FormatUint(frac, 10)
		}
	}
	return s + mag
}

// cntStr formats a count in truncated decimal units as fi_pingpong's
// cnt_str does: b (10^9), m (10^6), k (10^3).
func cntStr(n uint64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatUint(n/1e9, 10) + "b"
	case n >= 1e6:
		return strconv.FormatUint(n/1e6, 10) + "m"
	case n >= 1e3:
		return strconv.FormatUint(n/1e3, 10) + "k"
	}
	return strconv.FormatUint(n, 10)
}

// perfHeader is the table header, printed once before the first row
// ("%-8s%-8s%-9s%-8s%8s %10s%13s%13s").
const perfHeader = "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n"

// result is one row of the table.
type result struct {
	size      int   // message size in bytes
	sent      int64 // iterations
	acked     int64 // the client's receive count
	elapsedUS int64 // timed loop duration in microseconds
}

// xfersPerIter is the number of one-way transfers per iteration: a ping
// and a pong. fi_pingpong divides by it, so usec/xfer is one-way latency.
const xfersPerIter = 2

// usecPerXfer computes the usec/xfer column in single precision, as the C
// tool does: (float)elapsed / sent / 2.
func (r result) usecPerXfer() float32 {
	return float32(r.elapsedUS) / float32(r.sent) / xfersPerIter
}

// totalBytes is the total column: sent * size * 2 (both directions).
func (r result) totalBytes() uint64 {
	return uint64(r.sent) * uint64(r.size) * xfersPerIter
}

// mbPerSec is the MB/sec column: bytes / elapsed µs (decimal MB/s).
func (r result) mbPerSec() float64 { return float64(r.totalBytes()) / float64(r.elapsedUS) }

// line formats the row as fi_pingpong's show_perf does:
// "%-8s%-8s" "=%-8s" "%-8s" "%8.2fs%10.2f%11.2f%11.2f\n". It returns "" when
// sent is 0 (the C tool prints nothing then).
func (r result) line() string {
	if r.sent <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(padRight(sizeStr(uint64(r.size)), 8))
	b.WriteString(padRight(cntStr(uint64(r.sent)), 8))
	switch {
	case r.sent == r.acked:
		b.WriteString("=" + padRight(cntStr(uint64(r.acked)), 8))
	case r.sent < r.acked:
		b.WriteString("-" + padRight(cntStr(uint64(r.acked-r.sent)), 8))
	default:
		b.WriteString("+" + padRight(cntStr(uint64(r.sent-r.acked)), 8))
	}
	b.WriteString(padRight(sizeStr(r.totalBytes()), 8))
	u := r.usecPerXfer()
	b.WriteString(cfloat(float64(r.elapsedUS)/1e6, 8))
	b.WriteString("s")
	b.WriteString(cfloat(r.mbPerSec(), 10))
	b.WriteString(cfloat(float64(u), 11))
	b.WriteString(cfloat(1.0/float64(u), 11))
	b.WriteString("\n")
	return b.String()
}

// padRight is %-Ns.
func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

// cfloat is C's "%<width>.2f", including glibc's spelling of infinities
// and NaNs ("inf", "-nan").
func cfloat(v float64, width int) string {
	var s string
	switch {
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	case math.IsNaN(v):
		s = "nan"
		if math.Signbit(v) {
			s = "-nan"
		}
	default:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if len(s) < width {
		s = strings.Repeat(" ", width-len(s)) + s
	}
	return s
}
