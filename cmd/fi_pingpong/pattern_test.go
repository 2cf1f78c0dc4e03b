package main

import (
	"bytes"
	"testing"
)

// TestPatternCapture checks the first messages against the udp capture:
// k=0 starts "0123...", k=1 "789a...", k=2 "efgh...".
func TestPatternCapture(t *testing.T) {
	var p pattern
	for _, want := range []string{"0123456789abcdef", "789abcdefghijklm", "efghijklmnopqrst"} {
		buf := make([]byte, 16)
		p.fill(buf)
		if string(buf) != want {
			t.Fatalf("message %d = %q, want %q", p.k-1, buf, want)
		}
	}
}

// TestPatternDefinition checks byte i of message k = alphabet[(7k+i) mod 62]
// for sizes across the alphabet length and messages across a wrap.
func TestPatternDefinition(t *testing.T) {
	var p pattern
	for k := 0; k < 200; k++ {
		size := (k * 37) % 300
		buf := make([]byte, size)
		p.fill(buf)
		for i, c := range buf {
			if want := alphabet[(7*k+i)%62]; c != want {
				t.Fatalf("message %d byte %d = %q, want %q", k, i, c, want)
			}
		}
	}
}

func TestPatternCheck(t *testing.T) {
	var tx, rx pattern
	for k := 0; k < 100; k++ {
		buf := make([]byte, 1+k*13)
		tx.fill(buf)
		if bad := rx.check(buf); bad != -1 {
			t.Fatalf("message %d: intact buffer reported bad at %d", k, bad)
		}
	}
	buf := make([]byte, 1000)
	tx.fill(buf)
	buf[777] ^= 1
	if bad := rx.check(buf); bad != 777 {
		t.Fatalf("corrupted byte 777 reported at %d", bad)
	}
	// A zero-filled buffer (a peer without -c) fails at byte 0.
	if bad := rx.check(make([]byte, 8)); bad != 0 {
		t.Fatalf("zero buffer reported at %d", bad)
	}
	// Counters advance on every message, including empty ones.
	var a, b pattern
	a.fill(nil)
	if b.check(nil) != -1 || a.k != 1 || b.k != 1 {
		t.Fatalf("empty messages: k = %d, %d", a.k, b.k)
	}
	x, y := make([]byte, 10), make([]byte, 10)
	a.fill(x)
	var c pattern
	c.fill(nil)
	c.fill(y)
	if !bytes.Equal(x, y) {
		t.Fatalf("fill after an empty message: %q vs %q", x, y)
	}
}

func TestPatternCounterWraps(t *testing.T) {
	p := pattern{k: 1<<32 - 1}
	buf := make([]byte, 4)
	p.fill(buf) // (2^32-1)*7 mod 2^32 = 2^32-7; mod 62
	idx := int(uint32(1<<32-7) % 62)
	if string(buf) != alphabet2[idx:idx+4] || p.k != 0 {
		t.Fatalf("wrapped message %q (k now %d)", buf, p.k)
	}
}

func BenchmarkPatternFill(b *testing.B) {
	buf := make([]byte, 1<<20)
	var p pattern
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		p.fill(buf)
	}
}
