package main

import (
	"os"
	"strings"
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// The C libfabric 1.17 fi_info is the reference for the output format.
// These tests run both tools with the same arguments and compare what both
// print: usage, option errors, exit codes, and the udp provider's blocks
// of the listings (the C tool also lists providers we do not have, and
// the layered "udp;ofi_rxd").

const cFiInfo = "/usr/bin/fi_info"

// cTool returns the C fi_info, or skips the test; with FABRIC_INTEROP=1
// a missing tool fails the test instead.
func cTool(t *testing.T) string {
	t.Helper()
	_, err := os.Stat(cFiInfo)
	testutil.InteropCheck(t, cFiInfo, err)
	return cFiInfo
}

// interopEnv is the environment both tools run with: udp on loopback only,
// and no FI_PROVIDER.
func interopEnv(t *testing.T) []string {
	t.Helper()
	if v, ok := os.LookupEnv("FI_PROVIDER"); ok {
		t.Setenv("FI_PROVIDER", v) // restored after the test
		os.Unsetenv("FI_PROVIDER")
	}
	t.Setenv("FI_UDP_IFACE", "lo")
	return nil
}

func needUDP(t *testing.T) {
	t.Helper()
	if _, ok := provider.Lookup("udp"); !ok {
		t.Skip("the udp provider is not registered yet (prov/all does not import prov/udp)")
	}
}

func TestInteropUsageAndErrors(t *testing.T) {
	c := cTool(t)
	env := interopEnv(t)
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"-x"}, {"-lx"}, {"-p"}, {"--provider"}, {"--prov"}, {"--foo=1"}, {"--ver"},
		{"--e=1"}, {"--verbose=1"}, {"--version"}, {"-c", "FI_BOGUS"}, {"-c", "fi_msg|FI_PEER"},
		{"-m", "FI_BUFFERED_RECV"}, {"-t", "FI_EP_BOGUS"}, {"-a", "FI_ADDR_CXI"}, {"-p", "nosuchprov"},
		{"-p", "nosuchprov", "-e"}, {"-p", "udp", "-t", "FI_EP_MSG"},
		// Not compared: "-d nosuchdomain". libfabric 1.17's IP providers
		// ignore the domain (and fabric) name hints; GetInfo honours them
		// as fi_getinfo(3) and the fabtests negative tests require
		// (ENODATA for an unknown name).
	} {
		cout, cerr, ccode := exe(t, c, env, args...)
		gout, gerr, gcode := exe(t, fiInfoBin, env, args...)
		if cout != gout || cerr != gerr || ccode != gcode {
			t.Errorf("fi_info %q differs:\nC:  code %d stderr %q stdout %q\nGo: code %d stderr %q stdout %q",
				args, ccode, cerr, cout, gcode, gerr, gout)
		}
	}
}

// blocks splits a listing into the blocks that start with sep.
func blocks(out, sep string) []string {
	var bs []string
	for _, b := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(b, sep) || len(bs) == 0 {
			bs = append(bs, b)
			continue
		}
		bs[len(bs)-1] += b
	}
	return bs
}

// udpShort returns the short-listing blocks of the core udp provider.
func udpShort(out string) []string {
	var r []string
	for _, b := range blocks(out, "provider: ") {
		if strings.HasPrefix(b, "provider: udp\n") {
			r = append(r, b)
		}
	}
	return r
}

// udpLong returns the verbose blocks of the core udp provider.
func udpLong(out string) []string {
	var r []string
	for _, b := range blocks(out, "---\n") {
		if strings.Contains(b, "\n        prov_name: udp\n") {
			r = append(r, b)
		}
	}
	return r
}

// udpKnownDiffs are the fields in which our udp provider deliberately
// differs from libfabric's (see package prov/udp): it offers no
// FI_MULTICAST (no fi_join) but FI_MULTI_RECV and FI_DIRECTED_RECV, makes
// data progress manual by default (progress inline in CQ reads), and has no
// provider-side receive buffering to report. Every other line, and the
// layout of every line, must be identical.
var udpKnownDiffs = map[string]bool{
	// Shared transmit and receive contexts (prov/udp stx.go, the root's
	// SRX): libfabric's udp has neither.
	"fi_domain_attr/max_ep_stx_ctx":  true,
	"fi_domain_attr/max_ep_srx_ctx":  true,
	"fi_info/caps":                   true,
	"fi_tx_attr/caps":                true,
	"fi_rx_attr/caps":                true,
	"fi_info/mode":                   true, // FI_BUFFERED_RECV offered when the hints allow it (prov/udp bufrecv.go)
	"fi_rx_attr/total_buffered_recv": true,
	"fi_domain_attr/data_progress":   true,
	// Scalable endpoints (FI_NAMED_RX_CTX in the caps above): libfabric's
	// udp has none.
	"fi_domain_attr/max_ep_tx_ctx": true,
	"fi_domain_attr/max_ep_rx_ctx": true,
}

// compareLong compares two fi_tostr blocks line by line.
func compareLong(t *testing.T, what, c, g string) {
	t.Helper()
	cl, gl := strings.Split(c, "\n"), strings.Split(g, "\n")
	if len(cl) != len(gl) {
		t.Errorf("%s: %d lines from C, %d from Go:\nC:\n%s\nGo:\n%s", what, len(cl), len(gl), c, g)
		return
	}
	section := "fi_info"
	for i := range cl {
		ckey, cval, _ := strings.Cut(cl[i], ": ")
		gkey, gval, _ := strings.Cut(gl[i], ": ")
		if ckey != gkey {
			t.Errorf("%s line %d: key %q (C) vs %q (Go)", what, i+1, ckey, gkey)
			continue
		}
		if strings.HasSuffix(cl[i], ":") && strings.HasPrefix(cl[i], "    fi_") {
			section = strings.TrimSuffix(strings.TrimSpace(cl[i]), ":")
		}
		field := section + "/" + strings.TrimSpace(ckey)
		if cval == gval {
			continue
		}
		if udpKnownDiffs[field] {
			t.Logf("%s: %s: C %q, Go %q (known difference)", what, field, cval, gval)
			continue
		}
		t.Errorf("%s: %s: C %q, Go %q", what, field, cval, gval)
	}
}

func TestInteropUDPListings(t *testing.T) {
	c := cTool(t)
	needUDP(t)
	env := interopEnv(t)

	// -l: the udp entry is the same.
	cout, _, ccode := exe(t, c, env, "-l")
	gout, _, gcode := exe(t, fiInfoBin, env, "-l")
	const udpList = "udp:\n    version: 117.0\n"
	if ccode != 0 || gcode != 0 || !strings.Contains(cout, udpList) || !strings.Contains(gout, udpList) {
		t.Errorf("-l: C %d %q\nGo %d %q", ccode, cout, gcode, gout)
	}

	short := [][]string{{}, {"-p", "udp"}, {"-p", "udp", "-t", "FI_EP_DGRAM"}, {"-p", "udp", "-a", "FI_SOCKADDR_IN6"},
		{"-p", "udp", "-n", "127.0.0.1", "-P", "4001"}, {"-p", "udp", "-s", "127.0.0.1", "-P", "4002"}}
	for _, args := range short {
		cout, _, ccode := exe(t, c, env, args...)
		gout, _, gcode := exe(t, fiInfoBin, env, args...)
		cb, gb := udpShort(cout), udpShort(gout)
		if ccode != 0 || gcode != 0 || len(cb) == 0 || strings.Join(cb, "") != strings.Join(gb, "") {
			t.Errorf("fi_info %q: udp entries differ:\nC (%d):\n%s\nGo (%d):\n%s", args, ccode,
				strings.Join(cb, ""), gcode, strings.Join(gb, ""))
		}
		vargs := append([]string{"-v"}, args...)
		cout, _, _ = exe(t, c, env, vargs...)
		gout, _, _ = exe(t, fiInfoBin, env, vargs...)
		cl, gl := udpLong(cout), udpLong(gout)
		if len(cl) == 0 || len(cl) != len(gl) {
			t.Errorf("fi_info %q: %d udp infos from C, %d from Go", vargs, len(cl), len(gl))
			continue
		}
		for i := range cl {
			compareLong(t, strings.Join(vargs, " "), cl[i], gl[i])
		}
	}

	// -g: the udp variable prints byte for byte the same.
	cout, _, _ = exe(t, c, env, "-g", "UDP_IFACE")
	gout, _, _ = exe(t, fiInfoBin, env, "-g", "UDP_IFACE")
	if cout != gout || !strings.Contains(gout, "FI_UDP_IFACE=\x00lo\x00\n") {
		t.Errorf("-g UDP_IFACE: C %q, Go %q", cout, gout)
	}
	// -e: every variable we list is listed by C the same way, except
	// those of lnx and sim, providers libfabric 1.17 does not have, and of
	// the chaos hook, which it does not have either.
	cout, _, _ = exe(t, c, env, "-e")
	gout, _, _ = exe(t, fiInfoBin, env, "-e")
	for _, b := range blocks(gout, "# FI_") {
		name, _, _ := strings.Cut(b, ":")
		if strings.Contains(b, "\n# lnx: ") || strings.Contains(b, "\n# sim: ") || strings.Contains(b, "\n# chaos: ") {
			continue
		}
		if !strings.Contains(cout, b) {
			t.Errorf("-e: C does not print %s as we do:\n%q", name, b)
		}
	}
}

// A query FI_PROVIDER excludes: the C tool's stderr line and exit status
// (61), byte for byte.
func TestInteropNoMatchUnderFIProvider(t *testing.T) {
	c := cTool(t)
	env := append(interopEnv(t), "FI_PROVIDER=tcp", "FI_TCP_IFACE=lo")
	for _, args := range [][]string{{"-p", "udp"}, {"-p", "udp", "-t", "FI_EP_DGRAM"}} {
		cout, cerr, ccode := exe(t, c, env, args...)
		gout, gerr, gcode := exe(t, fiInfoBin, env, args...)
		if cout != gout || cerr != gerr || ccode != gcode || ccode != 61 {
			t.Errorf("FI_PROVIDER=tcp fi_info %q:\nC:  code %d stderr %q stdout %q\nGo: code %d stderr %q stdout %q",
				args, ccode, cerr, cout, gcode, gerr, gout)
		}
	}
}
