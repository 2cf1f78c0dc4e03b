package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// A fake provider registered in the test binary only; the in-process
// tests (run) restrict GetInfo to it with FI_PROVIDER or -p.
const fakeName = "fiinfo-fake"

type fakeProv struct{}

func (fakeProv) Name() string    { return fakeName }
func (fakeProv) Version() uint32 { return fabric.Version(2, 5) }
func (fakeProv) Fabric(*provider.FabricAttr) (provider.Fabric, error) {
	return nil, provider.ENOSYS
}
func (fakeProv) Params() []provider.Param {
	return []provider.Param{
		{Name: "FI_FIINFO_FAKE_IFACE", Type: provider.ParamString, Help: "Specify interface name"},
		{Name: "FI_FIINFO_FAKE_SIZE", Type: provider.ParamSize, Help: "queue size"},
	}
}

func (fakeProv) GetInfo(version uint32, node, service string, flags provider.Flags, hints *provider.Info) ([]*provider.Info, error) {
	sa := make([]byte, 16)
	binary.LittleEndian.PutUint16(sa, 2)
	copy(sa[4:], []byte{10, 9, 8, 7})
	rdm := &provider.Info{
		Caps:       fabric.CapMsg | fabric.CapTagged | fabric.CapRecv | fabric.CapSend | fabric.CapLocalComm,
		AddrFormat: fabric.SockAddrIn, SrcAddr: sa,
		TxAttr: &provider.TxAttr{Caps: fabric.CapMsg | fabric.CapTagged | fabric.CapSend, Size: 64},
		RxAttr: &provider.RxAttr{Caps: fabric.CapMsg | fabric.CapTagged | fabric.CapRecv, Size: 64},
		EPAttr: &provider.EPAttr{Type: fabric.EPRDM, Protocol: provider.ProtoXNet, MaxMsgSize: 4096},
		DomainAttr: &provider.DomainAttr{Name: "fakedom", Threading: fabric.ThreadSafe,
			ControlProgress: fabric.ProgressAuto, DataProgress: fabric.ProgressAuto, ResourceMgmt: fabric.RMEnabled},
		FabricAttr: &provider.FabricAttr{Name: "fakefab"},
	}
	str := &provider.Info{
		Caps:       fabric.CapMsg | fabric.CapRecv | fabric.CapSend,
		AddrFormat: fabric.AddrStr, SrcAddr: []byte("fi_fake://1"),
		TxAttr: &provider.TxAttr{Caps: fabric.CapMsg | fabric.CapSend},
		RxAttr: &provider.RxAttr{Caps: fabric.CapMsg | fabric.CapRecv},
		EPAttr: &provider.EPAttr{Type: fabric.EPDgram, Protocol: 17},
		DomainAttr: &provider.DomainAttr{Threading: fabric.ThreadSafe, ControlProgress: fabric.ProgressAuto,
			DataProgress: fabric.ProgressAuto, ResourceMgmt: fabric.RMEnabled},
	}
	return []*provider.Info{rdm, str}, nil
}

func init() { provider.Register(fakeProv{}) }

// fiInfoBin is the fi_info binary built by TestMain.
var fiInfoBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fi_info_test")
	if err != nil {
		panic(err)
	}
	fiInfoBin = filepath.Join(dir, "fi_info")
	goTool, lerr := exec.LookPath("go")
	if lerr != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out, err := exec.Command(goTool, "build", "-o", fiInfoBin, ".").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("building fi_info: " + err.Error() + "\n" + string(out))
	}
	code := testutil.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// runIn runs fi_info in-process.
func runIn(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"fi_info"}, args...), &o, &e)
	return o.String(), e.String(), code
}

// exe runs a fi_info binary with argv[0] "fi_info" and the environment
// env added to this process's.
func exe(t *testing.T, path string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Args[0] = "fi_info"
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %s: %v", path, err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

// cHelp is the C tool's `fi_info -h` output (libfabric 1.17).
const cHelp = "Usage: fi_info\n" +
	"  -h, --help\t\t\tdisplay this help and exit\n" +
	"  -s, --src_addr=ADDR\t\tsource name or address\n" +
	"  -n, --node=NAME\t\tdest node name or address\n" +
	"  -P, --port=PNUM\t\tport number\n" +
	"  -c, --caps=CAP1|CAP2..\tone or more capabilities: FI_MSG|FI_RMA...\n" +
	"  -m, --mode=MOD1|MOD2..\tone or more modes, default all modes\n" +
	"  -t, --ep_type=EPTYPE\t\tspecify single endpoint type: FI_EP_MSG, FI_EP_DGRAM...\n" +
	"  -d, --domain=DOMAIN\t\tspecify the domain name\n" +
	"  -f, --fabric=FABRIC\t\tspecify the fabric name\n" +
	"  -a, --addr_format=FMT\t\tspecify accepted address format: FI_FORMAT_UNSPEC, FI_SOCKADDR...\n" +
	"  -p, --provider=PROV\t\tspecify provider explicitly\n" +
	"  -e, --env\t\t\tprint libfabric environment variables\n" +
	"  -g, --getenv=SUBSTR\t\tprint libfabric environment variables with substr\n" +
	"  -i, --info=\t\tprint fi_info structures containing substr\n" +
	"  -l, --list\t\t\tlist available libfabric providers\n" +
	"  -v, --verbose\t\t\tverbose output\n" +
	"  --version\t\t\tprint version info and exit\n"

func TestUsageAndOptionErrors(t *testing.T) {
	cases := []struct {
		args   []string
		stderr string
		code   int
		help   bool
	}{
		{[]string{"-h"}, "", 1, true},
		{[]string{"--help"}, "", 1, true},
		{[]string{"--he"}, "", 1, true},
		{[]string{"-x"}, "fi_info: invalid option -- 'x'\n", 1, true},
		{[]string{"-lx"}, "fi_info: invalid option -- 'x'\n", 1, true},
		{[]string{"-p"}, "fi_info: option requires an argument -- 'p'\n", 1, true},
		{[]string{"--provider"}, "fi_info: option '--provider' requires an argument\n", 1, true},
		{[]string{"--prov"}, "fi_info: option '--provider' requires an argument\n", 1, true},
		{[]string{"--foo=1"}, "fi_info: unrecognized option '--foo=1'\n", 1, true},
		{[]string{"--ver"}, "fi_info: option '--ver' is ambiguous; possibilities: '--verbose' '--version'\n", 1, true},
		{[]string{"--e=1"}, "fi_info: option '--e=1' is ambiguous; possibilities: '--ep_type' '--env'\n", 1, true},
		{[]string{"--verbose=1"}, "fi_info: option '--verbose' doesn't allow an argument\n", 1, true},
		{[]string{"-c", "FI_BOGUS"}, "error: Unrecognized capability: FI_BOGUS\n", 22, false},
		{[]string{"-cFI_MSG|FI_AV_USER_ID"}, "error: Unrecognized capability: FI_AV_USER_ID\n", 22, false},
		{[]string{"-m", "FI_BUFFERED_RECV"}, "error: Unrecognized mode: FI_BUFFERED_RECV\n", 22, false},
		{[]string{"-t", "FI_EP_BOGUS"}, "error: Unrecognized endpoint type: FI_EP_BOGUS\n", 22, false},
		{[]string{"--addr_format=FI_ADDR_CXI"}, "error: Unrecognized address format: FI_ADDR_CXI\n", 22, false},
		{[]string{"-p", "nosuchprov"}, "fi_getinfo: -61\n", 61, false},
	}
	for _, c := range cases {
		stdout, stderr, code := runIn(t, c.args...)
		if stderr != c.stderr || code != c.code {
			t.Errorf("%q: stderr %q code %d; want %q %d", c.args, stderr, code, c.stderr, c.code)
		}
		if c.help && stdout != cHelp {
			t.Errorf("%q: stdout %q, want the usage", c.args, stdout)
		}
		if !c.help && stdout != "" {
			t.Errorf("%q: unexpected stdout %q", c.args, stdout)
		}
	}
	stdout, _, code := runIn(t, "--version")
	if code != 0 || stdout != "fi_info: 1.17.0\nlibfabric: 1.17.0\nlibfabric api: 1.17\n" {
		t.Errorf("--version: %q %d", stdout, code)
	}
	stdout, _, code = runIn(t, "--vers")
	if code != 0 || !strings.HasPrefix(stdout, "fi_info: 1.17.0\n") {
		t.Errorf("--vers: %q %d", stdout, code)
	}
}

func TestList(t *testing.T) {
	// -l lists every provider, whatever FI_PROVIDER and -p say.
	t.Setenv("FI_PROVIDER", "nosuchprov")
	stdout, stderr, code := runIn(t, "-l", "-p", "udp")
	if code != 0 || stderr != "" {
		t.Fatalf("-l: code %d stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, fakeName+":\n    version: 2.5\n") {
		t.Fatalf("-l output lacks the fake provider:\n%s", stdout)
	}
	if _, ok := provider.Lookup("udp"); ok && !strings.Contains(stdout, "udp:\n    version: 117.0\n") {
		t.Fatalf("-l output lacks udp:\n%s", stdout)
	}
	if n := strings.Count(stdout, "\n"); n != 2*len(provider.Providers()) {
		t.Fatalf("-l printed %d lines for %d providers", n, len(provider.Providers()))
	}
}

func TestShort(t *testing.T) {
	want := "provider: fiinfo-fake\n    fabric: fakefab\n    domain: fakedom\n    version: 2.5\n" +
		"    type: FI_EP_RDM\n    protocol: FI_PROTO_XNET\n" +
		"provider: fiinfo-fake\n    fabric: (null)\n    domain: (null)\n    version: 2.5\n" +
		"    type: FI_EP_DGRAM\n    protocol: Unknown\n"
	for _, args := range [][]string{{"-p", fakeName}, {"-pfiinfo-fake"}, {"--provider=FIINFO-FAKE"}, {"--provider", fakeName}} {
		stdout, stderr, code := runIn(t, args...)
		if code != 0 || stderr != "" || stdout != want {
			t.Errorf("%q: code %d stderr %q stdout\n%s", args, code, stderr, stdout)
		}
	}
	// Without hints, FI_PROVIDER selects.
	t.Setenv("FI_PROVIDER", fakeName)
	if stdout, _, _ := runIn(t); stdout != want {
		t.Errorf("FI_PROVIDER: %s", stdout)
	}
	// Hints filter: the endpoint type, a capability.
	stdout, _, code := runIn(t, "-t", "fi_ep_dgram")
	if code != 0 || strings.Count(stdout, "provider:") != 1 || !strings.Contains(stdout, "FI_EP_DGRAM") {
		t.Errorf("-t: %d\n%s", code, stdout)
	}
	stdout, _, code = runIn(t, "-c", "FI_TAGGED")
	if code != 0 || strings.Count(stdout, "provider:") != 1 || !strings.Contains(stdout, "FI_EP_RDM") {
		t.Errorf("-c: %d\n%s", code, stdout)
	}
	if _, stderr, code := runIn(t, "-c", "FI_RMA"); code != 61 || stderr != "fi_getinfo: -61\n" {
		t.Errorf("-c FI_RMA: %d %q", code, stderr)
	}
	if _, _, code := runIn(t, "-d", "nosuchdomain"); code != 61 {
		t.Errorf("-d: %d", code)
	}
	if _, _, code := runIn(t, "-f", "fakefab"); code != 0 {
		t.Errorf("-f: %d", code)
	}
}

func TestVerbose(t *testing.T) {
	t.Setenv("FI_PROVIDER", fakeName)
	stdout, _, code := runIn(t, "-v")
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
	if err != nil || code != 0 {
		t.Fatal(err, code)
	}
	var want strings.Builder
	for _, i := range infos {
		want.WriteString("---\n" + fabric.InfoToString(i))
	}
	if stdout != want.String() {
		t.Fatalf("-v output:\n%s\nwant:\n%s", stdout, want.String())
	}
	for _, line := range []string{"    src_addr: fi_sockaddr_in://10.9.8.7:0\n", "    src_addr: fi_fake://1\n",
		"        prov_name: fiinfo-fake\n", "        prov_version: 2.5\n", "        api_version: 1.17\n",
		"    nic: (nil)\n", "        protocol: Unknown\n"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("-v output lacks %q", line)
		}
	}
	// With hints every mode bit is offered (the fake needs none) and the
	// op_flags come from the hints.
	stdout, _, _ = runIn(t, "-v", "-p", fakeName)
	if strings.Count(stdout, "---\n") != 2 {
		t.Errorf("-v -p: %d infos", strings.Count(stdout, "---\n"))
	}
	// -i prints only infos containing the substring (case-insensitive).
	stdout, _, code = runIn(t, "-i", "FI_FAKE://")
	if code != 0 || strings.Count(stdout, "---\n") != 1 || !strings.Contains(stdout, "fi_fake://1") {
		t.Errorf("-i: %d\n%s", code, stdout)
	}
	stdout, _, code = runIn(t, "--info=no such text")
	if code != 0 || stdout != "" {
		t.Errorf("-i no match: %d %q", code, stdout)
	}
	// -l -v prints the provider-only infos verbosely.
	stdout, _, _ = runIn(t, "-lv")
	if !strings.Contains(stdout, "        prov_name: fiinfo-fake\n        prov_version: 2.5\n") {
		t.Errorf("-lv:\n%s", stdout)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("FI_PROVIDER", fakeName)
	t.Setenv("FI_FIINFO_FAKE_IFACE", "lo")
	t.Setenv("FI_FIINFO_FAKE_SIZE", "1 2")
	stdout, _, code := runIn(t, "-g", "fiinfo_fake")
	want := "# FI_FIINFO_FAKE_IFACE: String\n# fiinfo-fake: Specify interface name\nFI_FIINFO_FAKE_IFACE=\x00lo\x00\n\n" +
		"# FI_FIINFO_FAKE_SIZE: size_t\n# fiinfo-fake: queue size\nFI_FIINFO_FAKE_SIZE=\"1 2\"\n\n"
	if code != 0 || stdout != want {
		t.Fatalf("-g: %d %q", code, stdout)
	}
	stdout, _, _ = runIn(t, "-e")
	// The core variables first, in libfabric's order (FI_LOG_* before FI_PROVIDER).
	if !strings.HasPrefix(stdout, "# FI_LOG_LEVEL: String\n") ||
		!strings.Contains(stdout, "\n# FI_PROVIDER: String\n# Only use specified provider (default: all available)\n"+
			"FI_PROVIDER=\x00fiinfo-fake\x00\n\n") || !strings.Contains(stdout, want) {
		t.Fatalf("-e: %q", stdout)
	}
	// -e still runs the query: no match is an error.
	if _, stderr, code := runIn(t, "-e", "-p", "nosuchprov"); code != 61 || stderr != "fi_getinfo: -61\n" {
		t.Fatalf("-e -p nosuchprov: %d %q", code, stderr)
	}
}

// The built binary: exit codes and output through a real process.
func TestBinary(t *testing.T) {
	stdout, stderr, code := exe(t, fiInfoBin, nil, "-l")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "    version: ") {
		t.Fatalf("-l: %d %q %q", code, stdout, stderr)
	}
	if strings.Contains(stdout, fakeName) {
		t.Fatal("the test provider leaked into the binary")
	}
	if _, stderr, code = exe(t, fiInfoBin, nil, "-p", "nosuchprov"); code != 61 || stderr != "fi_getinfo: -61\n" {
		t.Fatalf("-p nosuchprov: %d %q", code, stderr)
	}
	if stdout, _, code = exe(t, fiInfoBin, nil, "-h"); code != 1 || stdout != cHelp {
		t.Fatalf("-h: %d %q", code, stdout)
	}
	if _, _, code = exe(t, fiInfoBin, nil, "-c", "FI_BOGUS"); code != 22 {
		t.Fatalf("-c FI_BOGUS: %d", code)
	}
	if _, ok := provider.Lookup("udp"); !ok {
		t.Skip("udp provider not registered")
	}
	stdout, _, code = exe(t, fiInfoBin, []string{"FI_UDP_IFACE=lo"}, "-p", "udp")
	if code != 0 || !strings.Contains(stdout, "provider: udp\n    fabric: 127.0.0.1/32\n    domain: lo\n") {
		t.Fatalf("-p udp: %d\n%s", code, stdout)
	}
}

// When nothing matches, standard error is the C tool's line alone (exit
// 61); at FI_LOG_LEVEL=info the reason the library computed (which hint
// field failed, or the FI_PROVIDER exclusion) follows that line.
func TestNoMatchReason(t *testing.T) {
	cases := []struct {
		env    []string
		args   []string
		reason string
	}{
		{[]string{"FI_UDP_IFACE=lo"}, []string{"-p", "udp", "-t", "FI_EP_MSG"}, "udp: ep_attr.type: FI_EP_MSG not supported"},
		{[]string{"FI_PROVIDER=tcp"}, []string{"-p", "udp"}, "udp: excluded by FI_PROVIDER"},
		{nil, []string{"-p", "nosuchprov"}, `no provider named \"nosuchprov\"`},
	}
	interopEnv(t) // no FI_PROVIDER from the caller's environment
	for _, c := range cases {
		_, stderr, code := exe(t, fiInfoBin, append(c.env, "FI_LOG_LEVEL=warn"), c.args...)
		if code != 61 || stderr != "fi_getinfo: -61\n" {
			t.Errorf("%v %q: code %d stderr %q, want 61 and C's line alone", c.env, c.args, code, stderr)
		}
		_, stderr, code = exe(t, fiInfoBin, append(c.env, "FI_LOG_LEVEL=info"), c.args...)
		_, after, ok := strings.Cut(stderr, "fi_getinfo: -61\n")
		if code != 61 || !ok || !strings.Contains(after, c.reason) {
			t.Errorf("%v %q at FI_LOG_LEVEL=info: code %d stderr %q; want C's line followed by %q",
				c.env, c.args, code, stderr, c.reason)
		}
	}
}
