package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"syscall"
	"time"

	fabric "github.com/gofabric/fabric"
)

// options are fi_pingpong's command-line options.
type options struct {
	srcPort  int    // -B: server control port, or the client's source port (0 = default/auto)
	dstPort  int    // -P: client destination control port (0 = 47592)
	dstAddr  string // positional: server address; set means client role
	domain   string // -d
	prov     string // -p
	epType   fabric.EPType
	iters    int // -I
	sizeMode sizeMode
	size     int  // -S n
	check    bool // -c
	tagged   bool // -m tagged
	verbose  bool // -v
	ipv6     bool // -6

	local   bool          // -L/--local
	timeout time.Duration // --timeout
	serveFD int           // --serve-fd (internal: the --local child's inherited listener)
}

const (
	defaultIters   = 10
	defaultTimeout = 60 * time.Second
	taggedTag      = 1234 // the tag fi_pingpong -m tagged uses
)

const usageText = `Usage:
  %[1]s [OPTIONS]		start server
  %[1]s [OPTIONS] <srv_addr>	connect to server

Ping pong client and server

Options:
 -B <src_port>        source control port number (server: 47592, client: auto)
 -P <dst_port>        destination control port number (client: 47592)
 -d <domain>          domain name
 -p <provider>        specific provider name eg udp, tcp
 -e <ep_type>         endpoint type: msg|rdm|dgram (dgram)
 -I <number>          number of iterations (10)
 -S <size>            specific transfer size or 'all' (default list)
 -c                   enables data_integrity checks
 -m <transmit mode>   transmit mode type: msg|tagged (msg)
 -h                   display this help output
 -v                   enable debugging output
 -6                   use IPv6 address
 -L, --local          run a server child process and the client on loopback
 --timeout <seconds>  bound on every wait (60; 0 = none)
`

// errHelp is returned for -h: the usage was printed, exit status 1 as the
// C tool does.
var errHelp = errors.New("help requested")

// shortOpts lists the short options; a ':' follows those that take an
// argument (getopt(3) syntax).
const shortOpts = "hvd:p:e:I:S:B:P:cm:6L"

// parseArgs parses args (without the program name) with GNU getopt
// semantics: bundled short options (-cv), attached or separate arguments
// (-S64, -S 64), long options with "=value" or a separate argument,
// operands anywhere ("--" ends the options); the first operand is the
// server address. Messages go to stderr; errors carry exit status 1.
func parseArgs(prog string, args []string, stderr io.Writer) (*options, error) {
	o := &options{epType: fabric.EPDgram, iters: defaultIters, timeout: defaultTimeout, serveFD: -1}
	var operands []string
	usage := func() error {
		fmt.Fprintf(stderr, usageText, prog)
		return &exitError{code: exitFailure, msg: "usage"}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			switch name {
			case "local":
				if hasVal {
					fmt.Fprintf(stderr, "%s: option '--local' doesn't allow an argument\n", prog)
					return nil, usage()
				}
				o.local = true
			case "timeout", "serve-fd":
				if !hasVal {
					if i+1 >= len(args) {
						fmt.Fprintf(stderr, "%s: option '--%s' requires an argument\n", prog, name)
						return nil, usage()
					}
					i++
					val = args[i]
				}
				if err := o.setLong(name, val, stderr); err != nil {
					return nil, err
				}
			case "help":
				usage()
				return nil, errHelp
			default:
				fmt.Fprintf(stderr, "%s: unrecognized option '%s'\n", prog, a)
				return nil, usage()
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			k := strings.IndexByte(shortOpts, c)
			if c == ':' || k < 0 {
				fmt.Fprintf(stderr, "%s: invalid option -- '%c'\n", prog, c)
				return nil, usage()
			}
			if k+1 < len(shortOpts) && shortOpts[k+1] == ':' {
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						fmt.Fprintf(stderr, "%s: option requires an argument -- '%c'\n", prog, c)
						return nil, usage()
					}
					i++
					val = args[i]
				}
				if err := o.setShort(c, val, stderr); err != nil {
					return nil, err
				}
				break
			}
			switch c {
			case 'h':
				usage()
				return nil, errHelp
			case 'v':
				o.verbose = true
			case 'c':
				o.check = true
			case '6':
				o.ipv6 = true
			case 'L':
				o.local = true
			}
		}
	}
	if len(operands) > 0 {
		o.dstAddr = operands[0]
	}
	if o.local && o.dstAddr != "" {
		fmt.Fprintf(stderr, "%s: --local runs both sides; do not give a server address\n", prog)
		return nil, &exitError{code: exitFailure, msg: "usage"}
	}
	return o, nil
}

// parseUlong parses a non-negative decimal number not above max, printing
// the C tool's message on failure.
func parseUlong(s string, max int64, stderr io.Writer) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	var errno syscall.Errno
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		errno = syscall.ERANGE
	case err != nil:
		errno = syscall.EINVAL
	case n < 0 || (max > 0 && n > max):
		errno = syscall.ERANGE
	}
	if errno != 0 {
		fmt.Fprintf(stderr, "Error parsing \"%s\": %s\n", s, strerror(errno))
		return 0, &exitError{code: exitFailure, msg: "bad number " + strconv.Quote(s)}
	}
	return n, nil
}

// strerror spells errno as glibc's strerror does (capitalised).
func strerror(e syscall.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (o *options) setShort(c byte, val string, stderr io.Writer) error {
	switch c {
	case 'd':
		o.domain = val
	case 'p':
		o.prov = val
	case 'e':
		switch strings.ToLower(val) {
		case "msg":
			o.epType = fabric.EPMsg
		case "rdm":
			o.epType = fabric.EPRDM
		case "dgram":
			o.epType = fabric.EPDgram
		default:
			fmt.Fprintf(stderr, "Unknown endpoint : %s\n", val)
			return &exitError{code: exitFailure, msg: "unknown endpoint type " + strconv.Quote(val)}
		}
	case 'I':
		n, err := parseUlong(val, math.MaxInt32, stderr)
		if err != nil {
			return err
		}
		o.iters = int(n)
	case 'S':
		if strings.EqualFold(val, "all") {
			o.sizeMode = sizesAll
			return nil
		}
		n, err := parseUlong(val, math.MaxInt32, stderr)
		if err != nil {
			return err
		}
		o.sizeMode, o.size = sizesOne, int(n)
	case 'B':
		n, err := parseUlong(val, math.MaxUint16, stderr)
		if err != nil {
			return err
		}
		o.srcPort = int(n)
	case 'P':
		n, err := parseUlong(val, math.MaxUint16, stderr)
		if err != nil {
			return err
		}
		o.dstPort = int(n)
	case 'm':
		// As in the C tool, any value other than "msg" selects tagged.
		o.tagged = !strings.EqualFold(val, "msg")
	}
	return nil
}

func (o *options) setLong(name, val string, stderr io.Writer) error {
	switch name {
	case "timeout":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e6 {
			fmt.Fprintf(stderr, "Error parsing \"%s\": %s\n", val, strerror(syscall.EINVAL))
			return &exitError{code: exitFailure, msg: "bad timeout " + strconv.Quote(val)}
		}
		o.timeout = time.Duration(f * float64(time.Second))
	case "serve-fd":
		n, err := parseUlong(val, 1<<20, stderr)
		if err != nil {
			return err
		}
		o.serveFD = int(n)
	}
	return nil
}

// client reports whether this process is the client.
func (o *options) client() bool { return o.dstAddr != "" }
