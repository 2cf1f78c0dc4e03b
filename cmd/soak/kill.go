package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	fabric "github.com/gofabric/fabric"
)

// childEnv makes the program run as the peer of a kill round: its value
// is "<provider> <parent's name in hex> <message size> <messages to receive before stalling>".
const childEnv = "GOFABRIC_SOAK_CHILD"

// killResult is what the kill rounds of one provider and message size
// counted.
type killResult struct {
	prov, kind string
	kills      int
	inflight   int           // sends in flight at the kills, in all
	errs       int           // error completions after the kills
	maxLatency time.Duration // kill to the last completion of a send in flight
	regions    []string      // the children's names (shm regions to be gone)
}

// killRound starts a peer process, streams messages of size to it, and
// SIGKILLs it once it has received some and stopped progressing with
// the rest in flight: every send in flight must complete (in error, as
// the peer is gone) within 5 s of the kill.
func killRound(prov string, size, window int, r *killResult) error {
	w, err := openWorld(prov, nil)
	if err != nil {
		return err
	}
	defer w.Close()
	p, err := w.node()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d %d", childEnv, prov, hex.EncodeToString(p.name), size, 4))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	reaped := false
	defer func() {
		if !reaped {
			cmd.Process.Kill() // by its PID
			cmd.Wait()
		}
	}()
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	// The child sends its name first.
	name := make([]byte, 256)
	if err := p.ep.Recv(name, nil, fabric.AddrUnspec, "name"); err != nil {
		return err
	}
	var nameLen uint64
	var rxErr error
	deadline := time.Now().Add(15 * time.Second)
	for nameLen == 0 && rxErr == nil {
		if time.Now().After(deadline) {
			return errors.New("the child did not send its name within 15s")
		}
		if _, err := poll(p.rxcq, func(c completion) { nameLen, rxErr = c.len, c.err }); err != nil {
			return err
		}
		if _, err := poll(p.txcq, func(completion) {}); err != nil {
			return err
		}
	}
	if rxErr != nil {
		return fmt.Errorf("child name: %w", rxErr)
	}
	r.regions = append(r.regions, string(name[:nameLen]))
	child, err := w.insert(name[:nameLen])
	if err != nil {
		return err
	}
	// Stream until the child says it stalled, then until the window is
	// full (sends are in flight, stuck), then kill it.
	bufs := make([][]byte, window)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	inflight, errs := 0, 0
	var last time.Time
	onTx := func(c completion) {
		inflight--
		last = c.at
		if c.err != nil {
			errs++
		}
	}
	stalled := time.Time{}
	deadline = time.Now().Add(20 * time.Second)
	for i := 0; ; {
		if time.Now().After(deadline) {
			return errors.New("the child did not stall within 20s")
		}
		select {
		case l, ok := <-lines:
			if !ok {
				return errors.New("the child ended before it was killed")
			}
			if l == "stalled" {
				stalled = time.Now()
			}
		default:
		}
		// Once the child stalled: the window full (the socket or the
		// queue to the child full, the transfer stuck half-way), or 5 s.
		if !stalled.IsZero() && (inflight == window && time.Since(stalled) > 100*time.Millisecond || time.Since(stalled) > 5*time.Second) {
			break
		}
		if _, err := poll(p.txcq, onTx); err != nil {
			return err
		}
		if inflight < window {
			err := p.ep.Send(bufs[i%window], nil, child, i)
			if err == nil {
				inflight++
				i++
			} else if !errors.Is(err, fabric.ErrAgain) {
				return fmt.Errorf("send before the kill: %w", err)
			}
		}
	}
	r.inflight += inflight
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	cmd.Wait()
	reaped = true
	r.kills++
	for deadline := killed.Add(10 * time.Second); inflight > 0; {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d sends still in flight 10s after the kill", inflight)
		}
		if _, err := poll(p.txcq, onTx); err != nil {
			return err
		}
	}
	r.errs += errs
	if !last.IsZero() && last.Sub(killed) > r.maxLatency {
		r.maxLatency = last.Sub(killed)
	}
	return w.Close()
}

// childMain is the peer of a kill round: it sends its name to the parent,
// receives n messages, says "stalled" and stops progressing until it is
// killed (or a minute has passed).
func childMain(spec string) int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "soak child: %s: %v\n", what, err)
		return 1
	}
	f := strings.Fields(spec)
	if len(f) != 4 {
		return fail("spec", fmt.Errorf("%q", spec))
	}
	parent, err := hex.DecodeString(f[1])
	if err != nil {
		return fail("parent", err)
	}
	size, err1 := strconv.Atoi(f[2])
	n, err2 := strconv.Atoi(f[3])
	if err := errors.Join(err1, err2); err != nil {
		return fail("spec", err)
	}
	w, err := openWorld(f[0], nil)
	if err != nil {
		return fail("open", err)
	}
	c, err := w.node()
	if err != nil {
		return fail("endpoint", err)
	}
	to, err := w.insert(parent)
	if err != nil {
		return fail("insert", err)
	}
	buf := make([]byte, size)
	if err := c.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		return fail("recv", err)
	}
	if err := c.ep.Send(c.name, nil, to, nil); err != nil {
		return fail("send", err)
	}
	got := 0
	var rxErr error
	deadline := time.Now().Add(20 * time.Second)
	for got < n && rxErr == nil && time.Now().Before(deadline) {
		if _, err := poll(c.txcq, func(completion) {}); err != nil {
			return fail("tx", err)
		}
		if _, err := poll(c.rxcq, func(cc completion) {
			if rxErr = cc.err; rxErr == nil {
				got++
				rxErr = c.ep.Recv(buf, nil, fabric.AddrUnspec, nil)
			}
		}); err != nil {
			return fail("rx", err)
		}
	}
	if got < n {
		return fail("receive", fmt.Errorf("%d of %d messages: %v", got, n, rxErr))
	}
	fmt.Println("stalled")
	time.Sleep(time.Minute) // until the parent kills us
	// Until then the world stays reachable: its sockets and shared memory
	// are closed by cleanups once it is collected, which would end the
	// connections before the kill this child stands for.
	runtime.KeepAlive(w)
	runtime.KeepAlive(c)
	return 1
}
