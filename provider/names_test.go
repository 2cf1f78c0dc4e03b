package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The generated tables come from line comments in this package; these tests
// hold them to the libfabric headers when libfabric-dev is installed (CI
// installs it).

const headerDir = "/usr/include/rdma"

func readHeaders(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(headerDir, "*.h"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("libfabric headers not installed in " + headerDir + " (install libfabric-dev)")
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

func TestBitNamesMatchHeaders(t *testing.T) {
	src := readHeaders(t)
	defs := map[string]uint64{}
	for _, m := range regexp.MustCompile(`(?m)^#define\s+(FI_\w+)\s+\(1(?:ULL)?\s*<<\s*(\d+)\)`).FindAllStringSubmatch(src, -1) {
		n, _ := strconv.Atoi(m[2])
		defs[m[1]] = 1 << n
	}
	// FI_MR_BASIC and FI_MR_SCALABLE are enum values (0 and 1) in
	// fabric.h, kept for compatibility; their bits are the enum's comments.
	defs["FI_MR_BASIC"], defs["FI_MR_SCALABLE"] = 1<<0, 1<<1
	tables := map[string][]bitName{"Caps": capsBits, "Flags": flagsBits, "Mode": modeBits, "Order": orderBits, "MRMode": mrModeBits}
	for typ, table := range tables {
		seen := map[uint64]string{}
		for _, bn := range table {
			v, ok := defs[bn.name]
			if !ok {
				t.Errorf("%s: %s is not a bit in the libfabric headers", typ, bn.name)
			} else if v != bn.bit {
				t.Errorf("%s: %s = %#x, headers say %#x", typ, bn.name, bn.bit, v)
			}
			if prev, dup := seen[bn.bit]; dup {
				t.Errorf("%s: %s and %s share bit %#x", typ, prev, bn.name, bn.bit)
			}
			seen[bn.bit] = bn.name
		}
	}
}

func TestErrnoTextsMatchHeader(t *testing.T) {
	src := readHeaders(t)
	// libfabric's own codes: "FI_ETRUNC = 265, /* Truncation error */".
	own := regexp.MustCompile(`(?m)^\s*FI_(E\w+)\s*=\s*(\d+|FI_ERRNO_OFFSET),\s*/\*\s*(.*?)\s*\*/`).FindAllStringSubmatch(src, -1)
	if len(own) == 0 {
		t.Fatal("no libfabric error codes found in fi_errno.h")
	}
	if len(own) != len(fiErrText) || int(ErrnoMax)-256 != len(fiErrText) {
		t.Errorf("fi_errno.h has %d own codes, fiErrText %d, ErrnoMax-256 = %d", len(own), len(fiErrText), ErrnoMax-256)
	}
	for _, m := range own {
		v := 256
		if m[2] != "FI_ERRNO_OFFSET" {
			v, _ = strconv.Atoi(m[2])
		}
		if got := StrError(-v); got != m[3] {
			t.Errorf("StrError(-FI_%s) = %q, fi_errno.h says %q", m[1], got, m[3])
		}
	}
	// The system codes libfabric names (uncommented "#define FI_EX EX"
	// lines, FI_EWOULDBLOCK being EAGAIN's alias) each have a text.
	sys := regexp.MustCompile(`(?m)^#define\s+FI_(E\w+)\s+E\w+`).FindAllStringSubmatch(src, -1)
	n := 0
	for _, m := range sys {
		if m[1] != "EWOULDBLOCK" {
			n++
		}
	}
	have := 0
	for _, s := range sysErrText {
		if s != "" {
			have++
		}
	}
	if n != have {
		t.Errorf("fi_errno.h names %d system error codes, sysErrText has texts for %d", n, have)
	}
}

func TestEnumStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{EPRDM.String(), "FI_EP_RDM"},
		{EPType(9).String(), "EPType(9)"},
		{Protocol(2).String(), "FI_PROTO_IWARP"},
		{ProtoXNet.String(), "FI_PROTO_XNET"},
		{EventConnReq.String(), "FI_CONNREQ"},
		{CQCondThreshold.String(), "FI_CQ_COND_THRESHOLD"},
		{(CapMsg | CapHMEM | CapSend).String(), "FI_MSG|FI_SEND|FI_HMEM"},
		{(Caps(1) | CapMsg).String(), "FI_MSG|0x1"},
		{Order(0).String(), "FI_ORDER_NONE"},
		{(OrderData | OrderRAR).String(), "FI_ORDER_RAR|FI_ORDER_DATA"},
		{MRMode(0).String(), "FI_MR_UNSPEC"},
		{EAGAIN.Error(), "Resource temporarily unavailable"},
		{ENORX.Error(), "Receiver not ready, no receive buffers available"},
		{StrError(0), "Success"},
		{StrError(270), "Unknown error 270"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, s := range []string{"FI_EP_UNSPEC", "FI_EP_SOCK_DGRAM"} {
		if v, ok := ParseEPType(s); !ok || v.String() != s {
			t.Errorf("ParseEPType(%q) = %v, %v", s, v, ok)
		}
	}
	if _, ok := ParseEPType("EPType(9)"); ok {
		t.Error("ParseEPType accepted an unnamed value")
	}
	if v, ok := ParseAddrFormat("FI_ADDR_CXI"); !ok || v != AddrCXI {
		t.Errorf("ParseAddrFormat(FI_ADDR_CXI) = %v, %v", v, ok)
	}
}
