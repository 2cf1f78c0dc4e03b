package main

import (
	"fmt"
	"testing"
)

func TestSizeStr(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{0, "0"}, {1, "1"}, {9, "9"}, {10, "10"}, {1023, "1023"},
		{1024, "1k"}, {1025, "1k"}, {1126, "1k"}, {1127, "1.1k"}, {1472, "1.4k"}, {1536, "1.5k"}, {2047, "1.9k"},
		{10000, "9.7k"}, {10240, "10k"}, {20000, "19k"}, {40000, "39k"}, {65536, "64k"}, {1048575, "1023k"},
		{1 << 20, "1m"}, {1<<20 + 1<<19, "1.5m"}, {6291456, "6m"}, {400 << 20, "400m"},
		{1 << 30, "1g"}, {4095 << 30, "4095g"}, {1<<30 + 1<<29, "1.5g"},
	} {
		if got := sizeStr(c.n); got != c.want {
			t.Errorf("sizeStr(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestCntStr(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1k"}, {1999, "1k"}, {10000, "10k"}, {999999, "999k"},
		{1000000, "1m"}, {123456789, "123m"}, {1000000000, "1b"}, {2147483647, "2b"},
	} {
		if got := cntStr(c.n); got != c.want {
			t.Errorf("cntStr(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestPerfHeader checks the header against the C format string and
// against a header printed by the real fi_pingpong 1.17.
func TestPerfHeader(t *testing.T) {
	want := fmt.Sprintf("%-8s%-8s%-9s%-8s%8s %10s%13s%13s\n", "bytes", "#sent", "#ack", "total", "time", "MB/sec", "usec/xfer", "Mxfers/sec")
	if perfHeader != want {
		t.Fatalf("header %q, want %q", perfHeader, want)
	}
	const fromC = "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n"
	if perfHeader != fromC {
		t.Fatalf("header %q differs from the C tool's %q", perfHeader, fromC)
	}
}

// TestResultLine compares rows with the output of a C program that applies
// show_perf's computation and printf formats (spec §2.7) to the same
// inputs (float usec/xfer, double MB/sec and Mxfers/sec, glibc inf/-nan).
// The first row is also the row the real tool printed in the udp capture.
func TestResultLine(t *testing.T) {
	for _, c := range []struct {
		size, sent, acked int
		elapsed           int64
		want              string
	}{
		{16, 3, 3, 40607, "16      3       =3       96          0.04s      0.00    6767.83       0.00\n"},
		{64, 1000, 1000, 20480, "64      1k      =1k      125k        0.02s      6.25      10.24       0.10\n"},
		{64, 10000, 10000, 92345, "64      10k     =10k     1.2m        0.09s     13.86       4.62       0.22\n"},
		{1472, 20000, 20000, 229000, "1.4k    20k     =20k     56m         0.23s    257.12       5.72       0.17\n"},
		{0, 1000, 1000, 38123, "0       1k      =1k      0           0.04s      0.00      19.06       0.05\n"},
		{1048576, 200, 200, 115833, "1m      200     =200     400m        0.12s   3620.99     289.58       0.00\n"},
		{1, 1, 1, 0, "1       1       =1       2           0.00s       inf       0.00        inf\n"},
		{0, 1, 1, 0, "0       1       =1       0           0.00s      -nan       0.00        inf\n"},
		{65536, 2000, 1999, 117000, "64k     2k      +1       250m        0.12s   2240.55      29.25       0.03\n"},
		{4096, 10, 12, 7, "4k      10      -2       80k         0.00s  11702.86       0.35       2.86\n"},
		{1024, 2147483647, 2147483647, 987654321, "1k      2b      =2b      4095g     987.65s   4453.02       0.23       4.35\n"},
		{6291456, 123456, 123456, 1234567891, "6m      123k    =123k    1446g    1234.57s   1258.28    5000.03       0.00\n"},
		{3, 7, 7, 1, "3       7       =7       42          0.00s     42.00       0.07      14.00\n"},
	} {
		r := result{size: c.size, sent: int64(c.sent), acked: int64(c.acked), elapsedUS: c.elapsed}
		if got := r.line(); got != c.want {
			t.Errorf("line(%+v)\n got %q\nwant %q", r, got, c.want)
		}
	}
	if got := (result{size: 64, sent: 0, acked: 0, elapsedUS: 5}).line(); got != "" {
		t.Errorf("zero iterations printed %q; the C tool prints nothing", got)
	}
}

// TestUsecPerXferIsOneWay pins the computation: half a round trip.
func TestUsecPerXferIsOneWay(t *testing.T) {
	r := result{size: 64, sent: 1000, acked: 1000, elapsedUS: 20480} // 1000 round trips in 20.48 ms
	if u := r.usecPerXfer(); u != 10.24 {
		t.Fatalf("usec/xfer = %v, want 10.24 (elapsed / iterations / 2)", u)
	}
	if mb := r.mbPerSec(); mb != 6.25 {
		t.Fatalf("MB/sec = %v, want 6.25 (both directions, decimal MB)", mb)
	}
}
