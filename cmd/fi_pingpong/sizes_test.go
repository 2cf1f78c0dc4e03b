package main

import (
	"math"
	"reflect"
	"strconv"
	"testing"
)

func TestTestSizes(t *testing.T) {
	const udpMax = 1472
	all1472 := []int{0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024}
	for _, c := range []struct {
		name   string
		mode   sizeMode
		size   int
		maxMsg uint64
		want   []int
	}{
		{"default udp", sizesDefault, 0, udpMax, []int{64, 256, 1024}},
		{"default tcp", sizesDefault, 0, math.MaxUint64, []int{64, 256, 1024, 4096, 65536, 1048576}},
		{"all udp", sizesAll, 0, udpMax, all1472},
		{"one", sizesOne, 64, udpMax, []int{64}},
		{"one at limit", sizesOne, 1472, udpMax, []int{1472}},
		{"one zero", sizesOne, 0, udpMax, []int{0}},
		{"one over limit", sizesOne, 1473, udpMax, nil},
		{"all exact 1536", sizesAll, 0, 1536, append(append([]int{}, all1472...), 1536)},
	} {
		got := testSizes(c.mode, c.size, bufSize(c.mode, c.size, c.maxMsg))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: sizes %v, want %v", c.name, got, c.want)
		}
	}
	// "all" without a limit stops at the 6 MiB buffer: ..., 4m, 6m.
	got := testSizes(sizesAll, 0, bufSize(sizesAll, 0, math.MaxUint64))
	if n := len(got); n < 2 || got[n-2] != 4<<20 || got[n-1] != 6<<20 || got[0] != 0 || got[1] != 1 || got[2] != 2 || got[3] != 3 {
		t.Errorf("all (unlimited) = %v", got)
	}
}

func TestBufSize(t *testing.T) {
	for _, c := range []struct {
		mode   sizeMode
		size   int
		maxMsg uint64
		want   int
	}{
		{sizesDefault, 0, 1472, 1472},
		{sizesAll, 0, math.MaxUint64, maxDataMsg},
		{sizesOne, 100, 1472, 100},
		{sizesOne, 5000, 1472, 1472},
		{sizesOne, 8 << 20, math.MaxUint64, 8 << 20},
	} {
		if got := bufSize(c.mode, c.size, c.maxMsg); got != c.want {
			t.Errorf("bufSize(%v, %d, %d) = %d, want %d", c.mode, c.size, c.maxMsg, got, c.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
