package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/gofabric/fabric"
	_ "github.com/gofabric/fabric/prov/all"
	"github.com/gofabric/fabric/provider"
)

// coreLog logs on the library's behalf (prov=core), as libfabric's core
// does.
var coreLog = provider.NewLogger("core")

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

var errUsage = errors.New("usage")

// longopts and helpStrings are fi_info's tables, in its order; usage is
// printed from them as the C tool does.
var longopts = []longOpt{
	{"help", noArg, 'h'},
	{"src_addr", requiredArg, 's'},
	{"node", requiredArg, 'n'},
	{"port", requiredArg, 'P'},
	{"caps", requiredArg, 'c'},
	{"mode", requiredArg, 'm'},
	{"ep_type", requiredArg, 't'},
	{"domain", requiredArg, 'd'},
	{"fabric", requiredArg, 'f'},
	{"addr_format", requiredArg, 'a'},
	{"provider", requiredArg, 'p'},
	{"env", noArg, 'e'},
	{"getenv", requiredArg, 'g'},
	{"info", requiredArg, 'i'},
	{"list", noArg, 'l'},
	{"verbose", noArg, 'v'},
	{"version", noArg, 0},
}

var helpStrings = [][2]string{
	{"", "\t\tdisplay this help and exit"},
	{"ADDR", "\t\tsource name or address"},
	{"NAME", "\t\tdest node name or address"},
	{"PNUM", "\t\tport number"},
	{"CAP1|CAP2..", "\tone or more capabilities: FI_MSG|FI_RMA..."},
	{"MOD1|MOD2..", "\tone or more modes, default all modes"},
	{"EPTYPE", "\t\tspecify single endpoint type: FI_EP_MSG, FI_EP_DGRAM..."},
	{"DOMAIN", "\t\tspecify the domain name"},
	{"FABRIC", "\t\tspecify the fabric name"},
	{"FMT", "\t\tspecify accepted address format: FI_FORMAT_UNSPEC, FI_SOCKADDR..."},
	{"PROV", "\t\tspecify provider explicitly"},
	{"", "\t\tprint libfabric environment variables"},
	{"SUBSTR", "\t\tprint libfabric environment variables with substr"},
	{"", "\t\tprint fi_info structures containing substr"},
	{"", "\t\tlist available libfabric providers"},
	{"", "\t\tverbose output"},
	{"", "\t\tprint version info and exit"},
}

const shortopts = "s:n:P:c:m:t:a:p:d:f:eg:i:lhv"

func usage(w io.Writer, prog string) {
	fmt.Fprintf(w, "Usage: %s\n", prog)
	for i, lo := range longopts {
		switch {
		case lo.has == requiredArg:
			fmt.Fprintf(w, "  -%c, --%s=%s%s\n", lo.val, lo.name, helpStrings[i][0], helpStrings[i][1])
		case lo.val == 0:
			fmt.Fprintf(w, "  --%s\t%s\n", lo.name, helpStrings[i][1])
		default:
			fmt.Fprintf(w, "  -%c, --%s\t%s\n", lo.val, lo.name, helpStrings[i][1])
		}
	}
}

// Names fi_info accepts for -c, -m, -t and -a (case-insensitively), as in
// libfabric 1.17's util/info.c.
var capNames = []struct {
	name string
	v    uint64
}{
	{"FI_MSG", uint64(fabric.CapMsg)}, {"FI_RMA", uint64(fabric.CapRMA)}, {"FI_TAGGED", uint64(fabric.CapTagged)},
	{"FI_ATOMIC", uint64(fabric.CapAtomic)}, {"FI_MULTICAST", uint64(fabric.CapMulticast)},
	{"FI_COLLECTIVE", uint64(fabric.CapCollective)},
	{"FI_READ", uint64(fabric.CapRead)}, {"FI_WRITE", uint64(fabric.CapWrite)}, {"FI_RECV", uint64(fabric.CapRecv)},
	{"FI_SEND", uint64(fabric.CapSend)}, {"FI_REMOTE_READ", uint64(fabric.CapRemoteRead)},
	{"FI_REMOTE_WRITE", uint64(fabric.CapRemoteWrite)},
	{"FI_MULTI_RECV", uint64(fabric.CapMultiRecv)}, {"FI_REMOTE_CQ_DATA", uint64(fabric.CapRemoteCQData)},
	{"FI_MORE", uint64(fabric.FlagMore)}, {"FI_PEEK", uint64(fabric.FlagPeek)},
	{"FI_TRIGGER", uint64(fabric.CapTrigger)}, {"FI_FENCE", uint64(fabric.CapFence)},
	{"FI_SOURCE_ERR", uint64(fabric.CapSourceErr)}, {"FI_LOCAL_COMM", uint64(fabric.CapLocalComm)},
	{"FI_REMOTE_COMM", uint64(fabric.CapRemoteComm)}, {"FI_SHARED_AV", uint64(fabric.CapSharedAV)},
	{"FI_RMA_EVENT", uint64(fabric.CapRMAEvent)}, {"FI_SOURCE", uint64(fabric.CapSource)},
	{"FI_NAMED_RX_CTX", uint64(fabric.CapNamedRxCtx)}, {"FI_DIRECTED_RECV", uint64(fabric.CapDirectedRecv)},
	{"FI_HMEM", uint64(fabric.CapHMEM)},
}

var modeNames = []struct {
	name string
	v    uint64
}{
	{"FI_CONTEXT", uint64(fabric.ModeContext)}, {"FI_MSG_PREFIX", uint64(fabric.ModeMsgPrefix)},
	{"FI_ASYNC_IOV", uint64(fabric.ModeAsyncIOV)}, {"FI_RX_CQ_DATA", uint64(fabric.ModeRxCQData)},
	{"FI_LOCAL_MR", uint64(fabric.ModeLocalMR)}, {"FI_NOTIFY_FLAGS_ONLY", 1 << 54},
	{"FI_RESTRICTED_COMP", 1 << 53}, {"FI_CONTEXT2", uint64(fabric.ModeContext2)},
}

var epTypeNames = []string{"FI_EP_UNSPEC", "FI_EP_MSG", "FI_EP_DGRAM", "FI_EP_RDM", "FI_EP_SOCK_STREAM",
	"FI_EP_SOCK_DGRAM"}

var addrFormatNames = []string{"FI_FORMAT_UNSPEC", "FI_SOCKADDR", "FI_SOCKADDR_IN", "FI_SOCKADDR_IN6",
	"FI_SOCKADDR_IB", "FI_ADDR_PSMX", "FI_ADDR_GNI", "FI_ADDR_BGQ", "FI_ADDR_MLX", "FI_ADDR_STR", "FI_ADDR_PSMX2",
	"FI_ADDR_EFA"}

// addrFormatValue maps addrFormatNames to values (FI_ADDR_EFA is 12).
func addrFormatValue(i int) fabric.AddrFormat {
	if addrFormatNames[i] == "FI_ADDR_EFA" {
		return 12
	}
	return fabric.AddrFormat(i)
}

// tokparse ORs the '|'-separated names of s (empty tokens skipped, as
// strtok does) into *v; it reports the first unknown name.
func tokparse(s string, table []struct {
	name string
	v    uint64
}, v *uint64) (bad string, ok bool) {
	for _, tok := range strings.Split(s, "|") {
		if tok == "" {
			continue
		}
		found := false
		for _, e := range table {
			if strings.EqualFold(e.name, tok) {
				*v |= e.v
				found = true
				break
			}
		}
		if !found {
			return tok, false
		}
	}
	return "", true
}

func lookupName(names []string, s string) (int, bool) {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return i, true
		}
	}
	return 0, false
}

type config struct {
	prog     string
	hints    *fabric.Info
	useHints bool
	node     string
	port     string
	flags    fabric.Flags
	list     bool
	verbose  bool
	env      bool
	envstr   string
}

// exitEINVAL is the exit status for an unrecognized name (-FI_EINVAL).
const exitEINVAL = 22

// run is fi_info's main; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	prog := "fi_info"
	if len(args) > 0 {
		prog = args[0]
		args = args[1:]
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()

	hints := fabric.AllocInfo()
	hints.Mode = ^fabric.Mode(0)
	hints.DomainAttr.Mode = ^fabric.Mode(0)
	hints.DomainAttr.MRMode = ^(fabric.MRBasic | fabric.MRScalable)
	c := &config{prog: prog, hints: hints}

	g := &getopt{prog: prog, args: args, short: shortopts, long: longopts, stderr: stderr}
	for {
		o, ok, err := g.next()
		if err != nil {
			usage(out, prog)
			return 1
		}
		if !ok {
			break
		}
		switch o.name {
		case 0: // --version
			fmt.Fprintf(out, "%s: %s\n", prog, versionString())
			fmt.Fprintf(out, "libfabric: %s\n", versionString())
			fmt.Fprintf(out, "libfabric api: %s\n", provider.VersionString(fabric.APIVersion))
			return 0
		case 's':
			c.node = o.arg
			c.flags |= fabric.FlagSource
		case 'n':
			c.node = o.arg
		case 'P':
			c.port = o.arg
		case 'c':
			v := uint64(hints.Caps)
			if bad, ok := tokparse(o.arg, capNames, &v); !ok {
				fmt.Fprintf(stderr, "error: Unrecognized capability: %s\n", bad)
				return exitEINVAL
			}
			hints.Caps = fabric.Caps(v)
			c.useHints = true
		case 'm':
			var v uint64
			if bad, ok := tokparse(o.arg, modeNames, &v); !ok {
				fmt.Fprintf(stderr, "error: Unrecognized mode: %s\n", bad)
				return exitEINVAL
			}
			hints.Mode = fabric.Mode(v)
			c.useHints = true
		case 't':
			i, ok := lookupName(epTypeNames, o.arg)
			if !ok {
				fmt.Fprintf(stderr, "error: Unrecognized endpoint type: %s\n", o.arg)
				return exitEINVAL
			}
			hints.EPAttr.Type = fabric.EPType(i)
			c.useHints = true
		case 'a':
			i, ok := lookupName(addrFormatNames, o.arg)
			if !ok {
				fmt.Fprintf(stderr, "error: Unrecognized address format: %s\n", o.arg)
				return exitEINVAL
			}
			hints.AddrFormat = addrFormatValue(i)
			c.useHints = true
		case 'p':
			hints.FabricAttr.ProvName = o.arg
			c.useHints = true
		case 'd':
			hints.DomainAttr.Name = o.arg
			c.useHints = true
		case 'f':
			hints.FabricAttr.Name = o.arg
			c.useHints = true
		case 'g':
			c.envstr = o.arg
			c.env = true
		case 'e':
			c.env = true
		case 'l':
			c.list = true
			c.flags |= fabric.FlagProvAttrOnly
		case 'i':
			c.envstr = o.arg
			c.verbose = true
		case 'v':
			c.verbose = true
		default: // 'h'
			usage(out, prog)
			return 1
		}
	}
	return c.query(out, stderr)
}

func versionString() string {
	return provider.VersionString(fabric.APIVersion) + ".0"
}

func (c *config) query(out *bufio.Writer, stderr io.Writer) int {
	var h *fabric.Info
	if c.useHints {
		h = c.hints
	}
	infos, err := fabric.GetInfo(fabric.APIVersion, c.node, c.port, c.flags, h)
	if err != nil {
		code := errnoOf(err)
		// Standard error and the exit status are the C tool's, byte for
		// byte: scripts compare them. Why nothing matched (the hint field
		// that failed, per provider) follows C's line only where
		// libfabric's own tool prints its reasons too: at FI_LOG_LEVEL=info
		// (or debug), as a log record.
		fmt.Fprintf(stderr, "fi_getinfo: %d\n", -code)
		if coreLog.Enabled(provider.LevelInfo, provider.SubsysCore) {
			coreLog.Info(provider.SubsysCore, "fi_info: nothing matched", slog.String("reason", err.Error()))
		}
		if code <= 0 || code > 255 {
			return 1
		}
		return code
	}
	switch {
	case c.env:
		printVars(out, c.envstr)
	case c.verbose:
		for _, info := range infos {
			s := fabric.InfoToString(info)
			if c.envstr == "" || containsFold(s, c.envstr) {
				out.WriteString("---\n")
				out.WriteString(s)
			}
		}
	case c.list:
		for _, info := range infos {
			fa := info.FabricAttr
			fmt.Fprintf(out, "%s:\n", cstr(fa.ProvName))
			fmt.Fprintf(out, "    version: %s\n", provider.VersionString(fa.ProvVersion))
		}
	default:
		for _, info := range infos {
			fa := info.FabricAttr
			fmt.Fprintf(out, "provider: %s\n", cstr(fa.ProvName))
			fmt.Fprintf(out, "    fabric: %s\n", cstr(fa.Name))
			fmt.Fprintf(out, "    domain: %s\n", cstr(info.DomainAttr.Name))
			fmt.Fprintf(out, "    version: %s\n", provider.VersionString(fa.ProvVersion))
			fmt.Fprintf(out, "    type: %s\n", enumName(info.EPAttr.Type.String()))
			fmt.Fprintf(out, "    protocol: %s\n", protocolName(info.EPAttr.Protocol))
		}
	}
	return 0
}

// errnoOf returns the libfabric error number in err.
func errnoOf(err error) int {
	var e fabric.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return int(fabric.ErrOther)
}

func cstr(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func enumName(s string) string {
	if strings.HasPrefix(s, "Unknown") {
		return "Unknown"
	}
	return s
}

// protocolName is fi_tostr's protocol name: FI_PROTO_MXM (7) and
// FI_PROTO_MRAIL (17) have none in libfabric 1.17.
func protocolName(p fabric.Protocol) string {
	if p == 7 || p == 17 {
		return "Unknown"
	}
	return enumName(p.String())
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func paramType(t fabric.ParamType) string {
	switch t {
	case fabric.ParamString:
		return "String"
	case fabric.ParamInt:
		return "Integer"
	case fabric.ParamSize:
		return "size_t"
	case fabric.ParamBool:
		return "Boolean (0/1, on/off, true/false, yes/no)"
	}
	return "Unknown"
}

// printVars prints the environment variables as fi_info -e does,
// including its quirk of writing NUL bytes around a value without spaces
// (printf("%c", '\0')), so that the output is byte-identical.
func printVars(out *bufio.Writer, envstr string) {
	for _, v := range fabric.EnvVars() {
		if envstr != "" && !containsFold(v.Name, envstr) {
			continue
		}
		fmt.Fprintf(out, "# %s: %s\n", v.Name, paramType(v.Type))
		fmt.Fprintf(out, "# %s\n", v.Help)
		if val, ok := v.Value(); ok {
			delim := byte(0)
			if strings.Contains(val, " ") {
				delim = '"'
			}
			out.WriteString(v.Name)
			out.WriteByte('=')
			out.WriteByte(delim)
			out.WriteString(val)
			out.WriteByte(delim)
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
	}
}
