package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	fabric "github.com/gofabric/fabric"
)

// opCtx is an operation context (struct fi_context): only its address is
// used, so passing &ctx as an `any` does not allocate.
type opCtx struct{ _ [4]uintptr }

// pingpong is one side of a run.
type pingpong struct {
	o      *options
	stdout io.Writer
	stderr io.Writer
	ctrl   *ctrl
	client bool

	hints *fabric.Info
	info  *fabric.Info
	fab   *fabric.Fabric
	eq    *fabric.EQ
	pep   *fabric.PassiveEndpoint
	dom   *fabric.Domain
	av    *fabric.AV
	txcq  *fabric.CQ
	rxcq  *fabric.CQ
	ep    *fabric.Endpoint

	remote     fabric.Addr
	bufSize    int // tx_size = rx_size
	txBuf      []byte
	rxBuf      []byte
	injectSize int

	txCtx, rxCtx, finCtx opCtx
	ent                  [1]fabric.CQEntry
	txPosted, txDone     uint64 // sends that need a completion, completions seen
	cntAck               int64  // receives completed in the current size
	txPat, rxPat         pattern
	active               bool // inside the timed loop: pattern fill/check on
	printedHeader        bool
}

// runPingpong runs one side (server or client) with the given options.
func runPingpong(o *options, stdout, stderr io.Writer) (err error) {
	p := &pingpong{o: o, stdout: stdout, stderr: stderr, client: o.client(), remote: fabric.AddrUnspec}
	defer func() {
		if cerr := p.closeAll(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	p.hints = p.makeHints()
	// Check provider, endpoint type and size before touching the control
	// channel, so that bad options fail at once with a clear message.
	// The server keeps this info; the client asks again with the
	// server's address once it has it.
	info, err := p.getinfo(p.hints)
	if err == nil {
		p.info = info
		err = p.checkSize()
	}
	if err != nil {
		if p.client {
			p.pokeServer()
		}
		return err
	}
	if err := p.ctrlInit(); err != nil {
		return err
	}
	defer p.ctrl.conn.Close()
	switch o.epType {
	case fabric.EPDgram, fabric.EPRDM:
		err = p.initConnectionless()
	case fabric.EPMsg:
		err = p.initMsg()
	default:
		err = failf(exitFailure, "Endpoint unsupported: %v", o.epType)
	}
	if err != nil {
		return err
	}
	p.debugf("running pingpong with the %v endpoint through the %s provider\n", p.info.EPAttr.Type, p.info.FabricAttr.ProvName)
	if o.verbose {
		fmt.Fprintf(stderr, "%s", fabric.InfoToString(p.info))
	}
	defer singleP()()
	for _, s := range testSizes(o.sizeMode, o.size, p.bufSize) {
		if err := p.pingpong(s); err != nil {
			return err
		}
	}
	if err := p.finalize(); err != nil {
		return err
	}
	return nil
}

// singleP runs the timed loops with one P (GOMAXPROCS=1) unless the user
// set GOMAXPROCS, and returns the function that restores the previous
// value. The loop is one goroutine busy-polling its CQs, as the C tool's
// single thread does, and needs no second P. With a second, idle P the Go
// scheduler moves that goroutine to another thread whenever sysmon
// preempts it (every 10 ms of running): it wakes an idle thread, which the
// kernel may queue on the CPU where the peer process busy-polls, leaving
// the other CPU idle and both pollers sharing one CPU for several
// milliseconds. On two CPUs that made about half of the 10,000-iteration
// runs 10-30% slower than the rest (perf sched timehist: the goroutine's
// time split over two threads, the other CPU idle). With one P a
// preempted goroutine resumes at once on the same thread.
func singleP() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}

func (p *pingpong) debugf(format string, args ...any) {
	if p.o.verbose {
		fmt.Fprintf(p.stderr, "[debug] "+format, args...)
	}
}

// pokeServer connects to the server's control port and closes at once,
// so that a server waiting for this client ends ("remote connection
// closed") instead of waiting forever.
func (p *pingpong) pokeServer() {
	port := p.o.dstPort
	if port == 0 {
		port = defaultCtrlPort
	}
	network := "tcp4"
	if p.o.ipv6 {
		network = "tcp6"
	}
	if c, err := net.DialTimeout(network, net.JoinHostPort(p.o.dstAddr, strconv.Itoa(port)), time.Second); err == nil {
		c.Close()
	}
}

// makeHints builds fi_pingpong's fi_getinfo hints.
func (p *pingpong) makeHints() *fabric.Info {
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	if p.o.tagged {
		h.Caps = fabric.CapTagged
	}
	h.Mode = fabric.ModeContext | fabric.ModeContext2 | fabric.ModeMsgPrefix
	h.DomainAttr.MRMode = fabric.MRLocal | fabric.MRAllocated | fabric.MRProvKey | fabric.MRVirtAddr
	h.EPAttr.Type = p.o.epType
	if p.o.epType == fabric.EPDgram && p.o.sizeMode == sizesOne {
		h.EPAttr.MaxMsgSize = uint64(p.o.size)
	}
	h.FabricAttr.ProvName = p.o.prov
	h.DomainAttr.Name = p.o.domain
	return h
}

// ctrlInit opens the control connection: the server accepts one client on
// -B (default 47592), the client connects to the server on -P.
func (p *pingpong) ctrlInit() error {
	o := p.o
	network := "tcp4"
	if o.ipv6 {
		network = "tcp6"
	}
	var conn net.Conn
	if p.client {
		port := o.dstPort
		if port == 0 {
			port = defaultCtrlPort
		}
		d := net.Dialer{Timeout: o.timeout}
		if o.srcPort != 0 {
			d.LocalAddr = &net.TCPAddr{Port: o.srcPort}
		}
		c, err := d.Dial(network, net.JoinHostPort(o.dstAddr, strconv.Itoa(port)))
		if err != nil {
			return failf(connectErrno(err), "failed to connect to %s port %d: %v", o.dstAddr, port, unwrapNetErr(err))
		}
		conn = c
	} else {
		var ln net.Listener
		var err error
		if o.serveFD >= 0 {
			f := os.NewFile(uintptr(o.serveFD), "ctrl-listener")
			if f == nil {
				return failf(exitFailure, "--serve-fd %d: not a file descriptor", o.serveFD)
			}
			ln, err = net.FileListener(f)
			f.Close()
			if err != nil {
				return failf(exitFailure, "--serve-fd %d: %v", o.serveFD, err)
			}
		} else {
			port := o.srcPort
			if port == 0 {
				port = defaultCtrlPort
			}
			addr := ":" + strconv.Itoa(port)
			if ln, err = net.Listen(network, addr); err != nil {
				return failf(connectErrno(err), "control port %d: %v", port, unwrapNetErr(err))
			}
		}
		p.debugf("SERVER: waiting for connection on %v\n", ln.Addr())
		if tl, ok := ln.(*net.TCPListener); ok && o.timeout > 0 {
			tl.SetDeadline(time.Now().Add(o.timeout))
		}
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return failf(exitETIMEDOUT, "no client connected to control port within %v", o.timeout)
			}
			return failf(connectErrno(err), "accept: %v", unwrapNetErr(err))
		}
		conn = c
	}
	p.ctrl = &ctrl{rw: conn, conn: conn, timeout: o.timeout}
	p.debugf("control connection %v -> %v\n", conn.LocalAddr(), conn.RemoteAddr())
	return nil
}

// unwrapNetErr drops net.OpError's address prefix when it adds nothing.
func unwrapNetErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// connectErrno returns the exit status for a socket error: its errno, or
// ETIMEDOUT for a timeout.
func connectErrno(err error) int {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return exitETIMEDOUT
	}
	return errnoOf(err)
}

// getinfo calls fabric.GetInfo and explains a failure.
func (p *pingpong) getinfo(h *fabric.Info) (*fabric.Info, error) {
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err == nil && len(infos) > 0 {
		return infos[0], nil
	}
	if err == nil {
		err = fabric.ErrNoData
	}
	code := exitFailure
	var en fabric.Errno
	if errors.As(err, &en) {
		code = int(en)
	}
	msg := fmt.Sprintf("fi_getinfo(): ret=-%d (%s)", code, fabric.StrError(code))
	if why := p.explainNoInfo(h); why != "" {
		msg += ": " + why
	}
	return nil, failf(code, "%s", msg)
}

// explainNoInfo says why GetInfo found nothing: unknown provider, endpoint
// type not supported, size over max_msg_size, or tagged not supported.
func (p *pingpong) explainNoInfo(h *fabric.Info) string {
	all, _ := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
	types := map[string]map[fabric.EPType]uint64{}
	domains := map[string]bool{}
	var domainList []string
	for _, in := range all {
		if in.FabricAttr == nil || in.EPAttr == nil {
			continue
		}
		if in.DomainAttr != nil && (p.o.prov == "" || in.FabricAttr.ProvName == p.o.prov) && !domains[in.DomainAttr.Name] {
			domains[in.DomainAttr.Name] = true
			domainList = append(domainList, in.DomainAttr.Name)
		}
		m := types[in.FabricAttr.ProvName]
		if m == nil {
			m = map[fabric.EPType]uint64{}
			types[in.FabricAttr.ProvName] = m
		}
		if in.EPAttr.MaxMsgSize > m[in.EPAttr.Type] {
			m[in.EPAttr.Type] = in.EPAttr.MaxMsgSize
		}
	}
	var names []string
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	prov := p.o.prov
	if prov != "" {
		if _, ok := types[prov]; !ok {
			return fmt.Sprintf("no provider named %q (available: %s)", prov, strings.Join(names, ", "))
		}
	}
	var sup []string
	for _, n := range names {
		if prov != "" && n != prov {
			continue
		}
		if max, ok := types[n][p.o.epType]; ok {
			if p.o.sizeMode == sizesOne && uint64(p.o.size) > max {
				return fmt.Sprintf("size %d exceeds the max_msg_size %d of provider %s for %v", p.o.size, max, n, p.o.epType)
			}
			sup = append(sup, n)
		}
	}
	if len(sup) == 0 {
		if prov != "" {
			return fmt.Sprintf("provider %s does not support %v", prov, p.o.epType)
		}
		return fmt.Sprintf("no provider supports %v (available: %s)", p.o.epType, strings.Join(names, ", "))
	}
	if p.o.domain != "" && !domains[p.o.domain] {
		sort.Strings(domainList)
		return fmt.Sprintf("no domain named %q (domains: %s)", p.o.domain, strings.Join(domainList, ", "))
	}
	if p.o.tagged {
		return fmt.Sprintf("no provider for %v with FI_TAGGED (-m tagged)", p.o.epType)
	}
	return ""
}

// checkSize rejects a -S size above the provider's max_msg_size (the C
// tool silently runs no size then).
func (p *pingpong) checkSize() error {
	max := p.info.EPAttr.MaxMsgSize
	if p.o.sizeMode == sizesOne && uint64(p.o.size) > max {
		return failf(exitEMSGSIZE, "size %d exceeds the max_msg_size %d of provider %s", p.o.size, max, p.info.FabricAttr.ProvName)
	}
	return nil
}

// openFabric opens the fabric and (for FI_EP_MSG) the event queue.
func (p *pingpong) openFabric(info *fabric.Info) error {
	var err error
	if p.fab, err = fabric.Open(info); err != nil {
		return failf(errnoOf(err), "fi_fabric(): %v", err)
	}
	if info.EPAttr.Type == fabric.EPMsg {
		if p.eq, err = p.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitUnspec}); err != nil {
			return failf(errnoOf(err), "fi_eq_open(): %v", err)
		}
	}
	return nil
}

// allocActive opens the domain objects of the active endpoint: buffers,
// CQs (FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE: busy-polled), AV and endpoint.
func (p *pingpong) allocActive(info *fabric.Info) error {
	var err error
	p.info = info
	if err := p.checkSize(); err != nil {
		return err
	}
	if p.dom, err = p.fab.OpenDomain(info); err != nil {
		return failf(errnoOf(err), "fi_domain(): %v", err)
	}
	if info.Mode&fabric.ModeLocalMR != 0 || info.DomainAttr.MRMode&fabric.MRLocal != 0 {
		return failf(exitFailure, "provider %s requires FI_MR_LOCAL registration, which this fi_pingpong does not do", info.FabricAttr.ProvName)
	}
	p.bufSize = bufSize(p.o.sizeMode, p.o.size, info.EPAttr.MaxMsgSize)
	n := max(p.bufSize, 64)
	p.rxBuf = make([]byte, n)
	p.txBuf = make([]byte, n)
	p.injectSize = int(min(info.TxAttr.InjectSize, 1<<30))

	if p.txcq, err = p.dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext, WaitObj: fabric.WaitNone, Size: info.TxAttr.Size}); err != nil {
		return failf(errnoOf(err), "fi_cq_open(): %v", err)
	}
	if p.rxcq, err = p.dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext, WaitObj: fabric.WaitNone, Size: info.RxAttr.Size}); err != nil {
		return failf(errnoOf(err), "fi_cq_open(): %v", err)
	}
	if t := info.EPAttr.Type; t == fabric.EPRDM || t == fabric.EPDgram {
		attr := &fabric.AVAttr{}
		if info.DomainAttr.AVType != fabric.AVUnspec {
			attr.Type = info.DomainAttr.AVType
		}
		if p.av, err = p.dom.OpenAV(attr); err != nil {
			return failf(errnoOf(err), "fi_av_open(): %v", err)
		}
	}
	if p.ep, err = p.dom.OpenEndpoint(info); err != nil {
		return failf(errnoOf(err), "fi_endpoint(): %v", err)
	}
	return nil
}

// initEP binds and enables the endpoint and posts the first receive.
func (p *pingpong) initEP() error {
	if p.eq != nil {
		if err := p.ep.BindEQ(p.eq); err != nil {
			return failf(errnoOf(err), "fi_ep_bind(): %v", err)
		}
	}
	if p.av != nil {
		if err := p.ep.BindAV(p.av); err != nil {
			return failf(errnoOf(err), "fi_ep_bind(): %v", err)
		}
	}
	if err := p.ep.BindCQ(p.txcq, fabric.FlagTransmit); err != nil {
		return failf(errnoOf(err), "fi_ep_bind(): %v", err)
	}
	if err := p.ep.BindCQ(p.rxcq, fabric.FlagRecv); err != nil {
		return failf(errnoOf(err), "fi_ep_bind(): %v", err)
	}
	if err := p.ep.Enable(); err != nil {
		return failf(errnoOf(err), "fi_enable(): %v", err)
	}
	return p.postRx()
}

// sendName sends the name of the endpoint (or passive endpoint).
func (p *pingpong) sendName(name []byte, err error) error {
	if err != nil {
		return failf(errnoOf(err), "fi_getname(): %v", err)
	}
	p.debugf("sending name %x\n", name)
	return p.ctrl.sendName(nameFormat(name, p.info.AddrFormat), name)
}

// nameFormat returns the address format to announce with name: the
// sockaddr family it holds, else the info's format.
func nameFormat(name []byte, f fabric.AddrFormat) uint32 {
	if len(name) >= 2 {
		fam := uint16(name[0]) | uint16(name[1])<<8
		switch {
		case fam == 2 && len(name) == 16:
			return uint32(fabric.SockAddrIn)
		case fam == 10 && len(name) == 28:
			return uint32(fabric.SockAddrIn6)
		}
	}
	return uint32(f)
}

// recvName reads the peer's name and puts it into the hints (client).
func (p *pingpong) recvName() ([]byte, error) {
	format, name, err := p.ctrl.recvName()
	if err != nil {
		return nil, err
	}
	p.debugf("received name %x (format %d)\n", name, format)
	if p.client {
		p.hints.DestAddr = name
		p.hints.AddrFormat = fabric.AddrFormat(format)
	}
	return name, nil
}

// initConnectionless sets up FI_EP_DGRAM and FI_EP_RDM: names both ways,
// each side inserts the other's into its AV.
func (p *pingpong) initConnectionless() error {
	var peer []byte
	var err error
	if p.client {
		if peer, err = p.recvName(); err != nil {
			return err
		}
		info, err := p.getinfo(p.hints)
		if err != nil {
			return err
		}
		if err := p.openFabric(info); err != nil {
			return err
		}
		if err := p.allocActive(info); err != nil {
			return err
		}
		if err := p.initEP(); err != nil {
			return err
		}
		if err := p.sendName(p.ep.Name()); err != nil {
			return err
		}
	} else {
		info := p.info
		if err := p.openFabric(info); err != nil {
			return err
		}
		if err := p.allocActive(info); err != nil {
			return err
		}
		if err := p.initEP(); err != nil {
			return err
		}
		if err := p.sendName(p.ep.Name()); err != nil {
			return err
		}
		if peer, err = p.recvName(); err != nil {
			return err
		}
	}
	addrs := []fabric.Addr{0}
	n, err := p.av.Insert([][]byte{peer}, addrs, 0)
	if err != nil || n != 1 {
		if err == nil {
			err = fabric.ErrInval
		}
		return failf(errnoOf(err), "fi_av_insert(): peer name %x: %v", peer, err)
	}
	p.remote = addrs[0]
	if p.o.epType == fabric.EPDgram {
		// A spare receive, so that one is always posted (the peer's fin
		// may arrive while the last pong's receive is being reposted).
		if err := p.postRx(); err != nil {
			return err
		}
	}
	return nil
}

// postRx posts a receive of the whole receive buffer (at least 64 bytes).
func (p *pingpong) postRx() error {
	for {
		var err error
		if p.o.tagged {
			err = p.ep.TRecv(p.rxBuf, nil, fabric.AddrUnspec, taggedTag, 0, &p.rxCtx)
		} else {
			err = p.ep.Recv(p.rxBuf, nil, fabric.AddrUnspec, &p.rxCtx)
		}
		if err == nil {
			return nil
		}
		if err != fabric.ErrAgain {
			return failf(errnoOf(err), "fi_recv(): %v", err)
		}
		if err := p.pollTx(); err != nil {
			return err
		}
	}
}

// pollTx reads the TX CQ once (driving progress), counting a completion.
func (p *pingpong) pollTx() error {
	n, err := p.txcq.Read(p.ent[:])
	if n > 0 {
		p.txDone += uint64(n)
		return nil
	}
	if err != nil && !isAgain(err) {
		return p.cqErr(p.txcq, "transmit", err)
	}
	return nil
}

// isAgain reports whether err is fabric.ErrAgain. It is the busy-poll
// loop's test: a type assertion compares the dynamic type and the value
// inline, where err != fabric.ErrAgain calls into the runtime.
func isAgain(err error) bool {
	e, ok := err.(fabric.Errno)
	return ok && e == fabric.ErrAgain
}

// cqErr turns a CQ read error into a failure, reading the error entry.
func (p *pingpong) cqErr(cq *fabric.CQ, what string, err error) error {
	if errors.Is(err, fabric.ErrAvail) {
		var ee fabric.CQErrEntry
		if rerr := cq.ReadErr(&ee); rerr != nil {
			return failf(errnoOf(rerr), "fi_cq_readerr(): %v", rerr)
		}
		return failf(int(ee.Err), "cq_readerr: %s completion failed: %s (prov_errno %d, len %d, olen %d)",
			what, fabric.StrError(int(ee.Err)), ee.ProvErrno, ee.Len, ee.Olen)
	}
	return failf(errnoOf(err), "fi_cq_read(): %v", err)
}

// waitCQ busy-polls cq until it returns one completion. With a timeout, it
// fails when no completion arrives for that long.
func (p *pingpong) waitCQ(cq *fabric.CQ, what string) error {
	var deadline time.Time
	for spins := 1; ; spins++ {
		n, err := cq.Read(p.ent[:])
		if n > 0 {
			return nil
		}
		if err != nil && !isAgain(err) {
			return p.cqErr(cq, what, err)
		}
		if spins&1023 == 0 && p.o.timeout > 0 {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(p.o.timeout)
			} else if now.After(deadline) {
				hint := "peer gone?"
				if p.info.EPAttr.Type == fabric.EPDgram {
					hint = "peer gone or datagram lost (FI_EP_DGRAM is unreliable)?"
				}
				return failf(exitETIMEDOUT, "no %s completion within %v: %s", what, p.o.timeout, hint)
			}
		}
	}
}

// waitTx waits until every posted send has completed.
func (p *pingpong) waitTx() error {
	for p.txDone < p.txPosted {
		if err := p.waitCQ(p.txcq, "transmit"); err != nil {
			return err
		}
		p.txDone++
	}
	return nil
}

// tx sends size bytes: inject below inject_size (no completion), else a
// send whose completion it waits for.
func (p *pingpong) tx(size int) error {
	buf := p.txBuf[:size]
	if p.o.check && p.active {
		p.txPat.fill(buf)
	}
	inject := size < p.injectSize
	for {
		var err error
		switch {
		case inject && p.o.tagged:
			err = p.ep.TInject(buf, p.remote, taggedTag)
		case inject:
			err = p.ep.Inject(buf, p.remote)
		case p.o.tagged:
			err = p.ep.TSend(buf, nil, p.remote, taggedTag, &p.txCtx)
		default:
			err = p.ep.Send(buf, nil, p.remote, &p.txCtx)
		}
		if err == nil {
			break
		}
		if err != fabric.ErrAgain {
			op := "fi_send"
			if inject {
				op = "fi_inject"
			}
			return failf(errnoOf(err), "%s(): %v", op, err)
		}
		if err := p.pollTx(); err != nil {
			return err
		}
	}
	if inject {
		return nil
	}
	p.txPosted++
	return p.waitTx()
}

// rx waits for one message, checks it with -c, and reposts the receive.
func (p *pingpong) rx(size int) error {
	if err := p.waitCQ(p.rxcq, "receive"); err != nil {
		return err
	}
	if p.o.check && p.active {
		if bad := p.rxPat.check(p.rxBuf[:size]); bad >= 0 {
			fmt.Fprintf(p.stdout, "Error at iteration=%d size=%d byte=%d\n", p.rxPat.k, size, bad)
			return failf(exitFailure, "data check failed: message %d of size %d differs at byte %d", p.rxPat.k, size, bad)
		}
	}
	if err := p.postRx(); err != nil {
		return err
	}
	p.cntAck++
	return nil
}

// pingpong runs one size: sync, the timed loop, the count exchange and the
// result row.
func (p *pingpong) pingpong(size int) error {
	p.cntAck = 0
	if err := p.ctrl.sync(p.client); err != nil {
		return err
	}
	iters := p.o.iters
	p.active = true
	start := time.Now()
	if p.client {
		for i := 0; i < iters; i++ {
			if err := p.tx(size); err != nil {
				return err
			}
			if err := p.rx(size); err != nil {
				return err
			}
		}
	} else {
		for i := 0; i < iters; i++ {
			if err := p.rx(size); err != nil {
				return err
			}
			if err := p.tx(size); err != nil {
				return err
			}
		}
	}
	elapsed := time.Since(start)
	p.active = false
	acked, err := p.ctrl.exchangeCount(p.client, p.cntAck)
	if err != nil {
		return err
	}
	p.cntAck = acked
	r := result{size: size, sent: int64(iters), acked: acked, elapsedUS: elapsed.Microseconds()}
	if line := r.line(); line != "" {
		if !p.printedHeader {
			io.WriteString(p.stdout, perfHeader)
			p.printedHeader = true
		}
		io.WriteString(p.stdout, line)
	}
	return nil
}

// finalize sends "fin\0" with FI_TRANSMIT_COMPLETE, waits for its
// completion and for the peer's fin, then closes the control connection.
func (p *pingpong) finalize() error {
	fin := p.txBuf[:4]
	copy(fin, "fin\x00")
	msg := fabric.Msg{IOV: [][]byte{fin}, Addr: p.remote, Context: &p.finCtx}
	flags := fabric.FlagInject | fabric.FlagTransmitComplete
	for {
		var err error
		if p.o.tagged {
			msg.Tag = taggedTag
			err = p.ep.TSendMsg(&msg, flags)
		} else {
			err = p.ep.SendMsg(&msg, flags)
		}
		if err == nil {
			break
		}
		if err != fabric.ErrAgain {
			return failf(errnoOf(err), "fi_sendmsg(fin): %v", err)
		}
		if err := p.pollTx(); err != nil {
			return err
		}
	}
	p.txPosted++
	if err := p.waitTx(); err != nil {
		return err
	}
	if err := p.waitCQ(p.rxcq, "receive (fin)"); err != nil {
		return err
	}
	p.ctrl.conn.Close()
	if p.o.epType == fabric.EPMsg {
		if err := p.ep.Shutdown(0); err != nil {
			p.debugf("fi_shutdown: %v\n", err)
		}
	}
	return nil
}

// closeAll closes every fabric object, dependents first.
func (p *pingpong) closeAll() error {
	var first error
	closeOne := func(name string, c interface{ Close() error }) {
		if err := c.Close(); err != nil && !errors.Is(err, fabric.ErrClosed) {
			p.debugf("fi_close(%s): %v\n", name, err)
			if first == nil {
				first = failf(errnoOf(err), "fi_close(%s): %v", name, err)
			}
		}
	}
	if p.ep != nil {
		closeOne("ep", p.ep)
	}
	if p.pep != nil {
		closeOne("pep", p.pep)
	}
	if p.rxcq != nil {
		closeOne("rxcq", p.rxcq)
	}
	if p.txcq != nil {
		closeOne("txcq", p.txcq)
	}
	if p.av != nil {
		closeOne("av", p.av)
	}
	if p.eq != nil {
		closeOne("eq", p.eq)
	}
	if p.dom != nil {
		closeOne("domain", p.dom)
	}
	if p.fab != nil {
		closeOne("fabric", p.fab)
	}
	return first
}

// errnoOf returns the libfabric or system error number in err, as an exit
// status (1 when there is none).
func errnoOf(err error) int {
	var en fabric.Errno
	if errors.As(err, &en) && en > 0 {
		return int(en)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != 0 {
		return int(errno)
	}
	return exitFailure
}
