package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

func TestParseArgsDefaults(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs("fi_pingpong", nil, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.epType != fabric.EPDgram || o.iters != 10 || o.sizeMode != sizesDefault || o.check || o.tagged ||
		o.client() || o.srcPort != 0 || o.dstPort != 0 || o.timeout != defaultTimeout || o.local || o.serveFD != -1 {
		t.Fatalf("defaults: %+v", o)
	}
}

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args  string
		check func(*options) bool
	}{
		{"-p udp -e dgram -S 64 -I 100 -c 127.0.0.1", func(o *options) bool {
			return o.prov == "udp" && o.epType == fabric.EPDgram && o.sizeMode == sizesOne && o.size == 64 &&
				o.iters == 100 && o.check && o.dstAddr == "127.0.0.1" && o.client()
		}},
		{"-pudp -S64 -I7 -cv", func(o *options) bool {
			return o.prov == "udp" && o.size == 64 && o.iters == 7 && o.check && o.verbose
		}},
		{"127.0.0.1 -I 5", func(o *options) bool { return o.dstAddr == "127.0.0.1" && o.iters == 5 }},
		{"-S all -e msg", func(o *options) bool { return o.sizeMode == sizesAll && o.epType == fabric.EPMsg }},
		{"-S ALL -e RDM", func(o *options) bool { return o.sizeMode == sizesAll && o.epType == fabric.EPRDM }},
		{"-B 23000 -P 23001 -d lo", func(o *options) bool { return o.srcPort == 23000 && o.dstPort == 23001 && o.domain == "lo" }},
		{"-m tagged", func(o *options) bool { return o.tagged }},
		{"-m msg", func(o *options) bool { return !o.tagged }},
		{"-m anything", func(o *options) bool { return o.tagged }},
		{"-6", func(o *options) bool { return o.ipv6 }},
		{"-L -S 64", func(o *options) bool { return o.local && o.size == 64 }},
		{"--local --timeout=2.5", func(o *options) bool { return o.local && o.timeout == 2500*time.Millisecond }},
		{"--timeout 3", func(o *options) bool { return o.timeout == 3*time.Second }},
		{"--timeout=0", func(o *options) bool { return o.timeout == 0 }},
		{"--serve-fd 3", func(o *options) bool { return o.serveFD == 3 }},
		{"-I 0", func(o *options) bool { return o.iters == 0 }},
		{"-- -x", func(o *options) bool { return o.dstAddr == "-x" }},
	} {
		var stderr bytes.Buffer
		o, err := parseArgs("fi_pingpong", strings.Fields(c.args), &stderr)
		if err != nil {
			t.Errorf("%q: %v (%s)", c.args, err, stderr.String())
			continue
		}
		if !c.check(o) {
			t.Errorf("%q parsed as %+v", c.args, o)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, c := range []struct {
		args string
		msg  string
	}{
		{"-e foo", "Unknown endpoint : foo"},
		{"-I abc", `Error parsing "abc": Invalid argument`},
		{"-I -5", `Error parsing "-5": Numerical result out of range`},
		{"-I 99999999999999999999", "Numerical result out of range"},
		{"-S 3000000000", "Numerical result out of range"},
		{"-B 70000", `Error parsing "70000": Numerical result out of range`},
		{"-P x", "Invalid argument"},
		{"-x", "invalid option -- 'x'"},
		{"-S", "option requires an argument -- 'S'"},
		{"--bogus", "unrecognized option '--bogus'"},
		{"--timeout=-1", "Invalid argument"},
		{"--timeout", "requires an argument"},
		{"--local 127.0.0.1", "--local runs both sides"},
		{"-h", "Usage:"},
	} {
		var stderr bytes.Buffer
		_, err := parseArgs("fi_pingpong", strings.Fields(c.args), &stderr)
		if err == nil {
			t.Errorf("%q: accepted", c.args)
			continue
		}
		if exitCode(err) != exitFailure {
			t.Errorf("%q: exit %d, want 1", c.args, exitCode(err))
		}
		if !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%q: stderr %q does not contain %q", c.args, stderr.String(), c.msg)
		}
	}
}

func TestServerArgsRoundTrip(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs("fi_pingpong", strings.Fields("-L -p udp -e dgram -S 1472 -I 33 -c -m tagged -d lo --timeout 7"), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseArgs("fi_pingpong", serverArgs(o), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if s.local || s.client() || s.prov != "udp" || s.epType != fabric.EPDgram || s.sizeMode != sizesOne || s.size != 1472 ||
		s.iters != 33 || !s.check || !s.tagged || s.domain != "lo" || s.timeout != 7*time.Second {
		t.Fatalf("server options %+v from %q", s, serverArgs(o))
	}
}
