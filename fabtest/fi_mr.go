package fabtest

import (
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// mrCases lists the fi_mr(3) behaviours, in the order they run.
var mrCases = []testCase{
	{"fi_mr/reg_keys_access", mrRegKeysAccess},
	{"fi_mr/reg_every_access_subset_and_size", mrRegEveryAccessSubsetAndSize},
	{"fi_mr/regv_and_regattr_up_to_iov_limit", mrRegvAndRegattrUpToIovLimit},
	{"fi_mr/reg_close_realloc_repeat", mrRegCloseReallocRepeat},
	{"fi_mr/keys_and_remote_addressing", mrKeysAndRemoteAddressing},
	{"fi_mr/bind_counter_rules", mrBindCounterRules},
	{"fi_mr/bound_counter_read_alone_sees_remote_writes", mrBoundCounterReadAloneSeesRemoteWrites},
	{"fi_mr/desc_accepted_by_data_ops", mrDescAcceptedByDataOps},
}

func mrRegKeysAccess(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	buf := make([]byte, 4096)
	access := fabric.FlagRemoteRead | fabric.FlagRemoteWrite
	mr, err := e.dom.RegMR(buf, access, 0, 0xC0DE, 0)
	if err != nil {
		t.Fatalf("reg: %v", err)
	}
	if e.info.DomainAttr.MRMode&fabric.MRProvKey == 0 && mr.Key() != 0xC0DE {
		t.Fatalf("requested key not honoured: %#x", mr.Key())
	}
	if e.info.DomainAttr.MRMode&fabric.MRProvKey == 0 {
		_, err = e.dom.RegMR(buf, access, 0, 0xC0DE, 0)
		isErr(t, "duplicate key", err, fabric.ErrNoKey)
	}
	_, err = e.dom.RegMR(buf, 1<<40, 0, 0xC0DF, 0)
	if err == nil {
		t.Fatal("bad access bits accepted")
	}
	isErr(t, "domain close with MR", e.dom.Close(), fabric.ErrBusy)
	if err := mr.Close(); err != nil {
		t.Fatal(err)
	}
}

func mrRegEveryAccessSubsetAndSize(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	big := make([]byte, 8<<20)
	key := uint64(0x1000)
	for mask := 0; mask < 1<<len(mrAccessBits); mask++ {
		var access fabric.Flags
		for i, b := range mrAccessBits {
			if mask&(1<<i) != 0 {
				access |= b
			}
		}
		for _, size := range []int{1, 64, 4096, 1 << 20, 8 << 20} {
			key++
			mr, err := e.dom.RegMR(big[:size], access, 0, key, 0)
			if err != nil {
				t.Fatalf("fi_mr_reg(access %v, %d bytes): %v", access, size, err)
			}
			if mr.Len() != uint64(size) || mr.Access() != access {
				t.Fatalf("MR reports len %d access %v; want %d %v", mr.Len(), mr.Access(), size, access)
			}
			if err := mr.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func mrRegvAndRegattrUpToIovLimit(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	limit := int(max(e.info.DomainAttr.MRIOVLimit, 1))
	big := make([]byte, 8<<20)
	for n := 1; n <= limit; n++ {
		iov := make([][]byte, n)
		part := len(big) / n
		for i := range iov {
			iov[i] = big[i*part : (i+1)*part]
		}
		mr, err := e.dom.RegMRv(iov, fabric.FlagSend|fabric.FlagRecv, 0, uint64(100+n), 0)
		if err != nil {
			t.Fatalf("fi_mr_regv with %d iovecs: %v", n, err)
		}
		if mr.Len() != uint64(n*part) {
			t.Fatalf("regv of %d iovecs: len %d; want %d", n, mr.Len(), n*part)
		}
		mr.Close()
		ctx := new(int)
		mr, err = e.dom.RegMRAttr(&fabric.MRAttr{IOV: iov, Access: fabric.FlagRecv, RequestedKey: uint64(200 + n),
			Context: ctx}, 0)
		if err != nil {
			t.Fatalf("fi_mr_regattr with %d iovecs: %v", n, err)
		}
		if mr.Context() != ctx || mr.Desc() == nil || mr.Desc().Key() != mr.Key() {
			t.Fatalf("regattr: context %v desc %v", mr.Context(), mr.Desc())
		}
		mr.Close()
	}
	iov := make([][]byte, limit+1)
	for i := range iov {
		iov[i] = big[i : i+1]
	}
	_, err := e.dom.RegMRv(iov, fabric.FlagRecv, 0, 999, 0)
	isErr(t, "fi_mr_regv over mr_iov_limit", err, fabric.ErrInval)
	_, err = e.dom.RegMRAttr(nil, 0)
	isErr(t, "fi_mr_regattr(nil)", err, fabric.ErrInval)
	_, err = e.dom.RegMR(big[:8], fabric.FlagRecv, 0, 998, fabric.FlagInject)
	isErr(t, "fi_mr_reg with an unknown flag", err, fabric.ErrBadFlags)
}

func mrRegCloseReallocRepeat(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	virt := e.info.DomainAttr.MRMode&(fabric.MRVirtAddr|fabric.MRBasic) != 0
	for i := 0; i < 5; i++ {
		buf := make([]byte, 1<<16)
		mr, err := e.dom.RegMRAttr(&fabric.MRAttr{IOV: [][]byte{buf}, Access: fabric.FlagRemoteWrite | fabric.FlagRecv,
			RequestedKey: 0xC0DE}, 0)
		if err != nil {
			t.Fatalf("iteration %d: %v (a closed region's key must be reusable)", i, err)
		}
		want := uint64(0)
		if virt {
			want = vaOf(buf)
		}
		if mr.Address() != want || mr.Len() != uint64(len(buf)) {
			t.Fatalf("iteration %d: address %#x len %d; want %#x %d", i, mr.Address(), mr.Len(), want, len(buf))
		}
		if err := mr.Close(); err != nil {
			t.Fatal(err)
		}
		isErr(t, "second MR close", mr.Close(), fabric.ErrClosed)
	}
}

func mrKeysAndRemoteAddressing(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	mode := e.info.DomainAttr.MRMode
	buf := make([]byte, 4096)
	mr, err := e.dom.RegMR(buf, fabric.FlagRemoteRead, 128, 0x77, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	switch {
	case mode&(fabric.MRVirtAddr|fabric.MRBasic) != 0:
		if mr.Address() != vaOf(buf)+128 {
			t.Fatalf("FI_MR_VIRT_ADDR region address %#x; want VA+offset %#x", mr.Address(), vaOf(buf)+128)
		}
	default:
		if mr.Address() != 128 {
			t.Fatalf("offset-addressed region address %#x; want the offset 128", mr.Address())
		}
	}
	if mode&(fabric.MRProvKey|fabric.MRBasic) != 0 {
		mr2, err := e.dom.RegMR(buf, fabric.FlagRemoteRead, 0, 0x77, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer mr2.Close()
		if mr2.Key() == mr.Key() {
			t.Fatalf("FI_MR_PROV_KEY handed out key %#x twice", mr.Key())
		}
		return
	}
	if mr.Key() != 0x77 {
		t.Fatalf("requested key 0x77, got %#x", mr.Key())
	}
	_, err = e.dom.RegMR(buf, fabric.FlagRemoteRead, 0, 0x77, 0)
	isErr(t, "duplicate requested key", err, fabric.ErrNoKey)
	if ks := e.info.DomainAttr.MRKeySize; ks > 0 && ks < 8 {
		_, err = e.dom.RegMR(buf, fabric.FlagRemoteRead, 0, 1<<(8*ks), 0)
		isErr(t, "key wider than mr_key_size", err, fabric.ErrKeyRejected)
	}
}

func mrBindCounterRules(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	c, err := e.dom.OpenCntr(nil)
	skipIfNotSupported(t, "fi_cntr_open", err)
	defer c.Close()
	mr, err := e.dom.RegMR(make([]byte, 64), fabric.FlagRemoteWrite, 0, 0xabc, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	isErr(t, "fi_mr_bind(nil)", mr.Bind(nil, fabric.FlagRemoteWrite), fabric.ErrInval)
	if err := mr.Bind(c, fabric.FlagSend); !errors.Is(err, fabric.ErrBadFlags) && !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("fi_mr_bind with FI_SEND: %v", err)
	}
	other := tg.open(t, envOpts{noEnable: true})
	oc, err := other.dom.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	isErr(t, "counter of another domain", mr.Bind(oc, fabric.FlagRemoteWrite), fabric.ErrDomain)
	if err := mr.Bind(c, fabric.FlagRemoteWrite); err != nil {
		t.Fatalf("fi_mr_bind(FI_REMOTE_WRITE): %v", err)
	}
	isErr(t, "close a counter bound to an MR", c.Close(), fabric.ErrBusy)
	if err := mr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("counter close after the MR closed: %v", err)
	}
}

// mrBoundCounterReadAloneSeesRemoteWrites: a counter bound to a region
// with FI_REMOTE_WRITE (FI_RMA_EVENT) counts the peer's RMA writes to it
// when the target application only reads, or waits on, that counter: no
// target CQ is read and no endpoint is bound to the counter, so the
// counter's reads must drive the progress that performs the writes.
func mrBoundCounterReadAloneSeesRemoteWrites(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{caps: fabric.CapRMA | fabric.CapRMAEvent})
	c, err := b.dom.OpenCntr(nil)
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "counter", c.Close()) })
	var regFlags fabric.Flags
	if b.info.DomainAttr.MRMode&fabric.MRRMAEvent != 0 {
		regFlags = fabric.FlagRMAEvent
	}
	buf := make([]byte, 64)
	mr, err := b.dom.RegMR(buf, fabric.FlagRemoteWrite, 0, 0x5a, regFlags)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "mr", mr.Close()) })
	if err := mr.Bind(c, fabric.FlagRemoteWrite); err != nil {
		t.Fatalf("fi_mr_bind: %v", err)
	}
	if err := mr.Enable(); err != nil {
		t.Fatalf("fi_mr_enable: %v", err)
	}
	// Each write goes to its own offset: the test reads the first one while
	// the second is in flight, and what orders the two is the socket
	// between the peers, which the race detector does not see.
	write := func(data string, off int) {
		t.Helper()
		retry(t, "fi_write", func() error {
			return a.ep.RMAWrite([]byte(data), nil, ab, mr.Address()+uint64(off), mr.Key(), nil)
		}, a.txcq)
	}
	// Read: the initiator's CQ and the target's counter, nothing else.
	write("first", 0)
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		v, err := c.Read()
		if err != nil {
			t.Fatalf("fi_cntr_read: %v", err)
		}
		if v == 1 {
			break
		}
		if v > 1 || time.Now().After(deadline) {
			t.Fatalf("counter %d after one remote write (want 1 within %v)", v, scaled(5*time.Second))
		}
		a.txcq.Read(nil)
	}
	if string(buf[:5]) != "first" {
		t.Fatalf("region holds %q after the counted write", buf[:5])
	}
	// Wait: the initiator progresses in another goroutine meanwhile.
	write("again", 32)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				a.txcq.Read(nil)
				runtime.Gosched()
			}
		}
	}()
	err = c.Wait(2, scaled(5*time.Second))
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("fi_cntr_wait(2) on the region's counter: %v", err)
	}
	if string(buf[32:37]) != "again" {
		t.Fatalf("region holds %q after the second counted write", buf[32:37])
	}
	if e, _ := c.ReadErr(); e != 0 {
		t.Fatalf("error count %d", e)
	}
	drainTx(t, a.txcq, 2)
}

func mrDescAcceptedByDataOps(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	sbuf, rbuf := []byte("described"), make([]byte, 16)
	smr, err := a.dom.RegMR(sbuf, fabric.FlagSend, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer smr.Close()
	rmr, err := b.dom.RegMR(rbuf, fabric.FlagRecv, 0, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rmr.Close()
	if err := b.ep.Recv(rbuf, rmr.Desc(), fabric.AddrUnspec, nil); err != nil {
		t.Fatalf("recv with a descriptor: %v", err)
	}
	retry(t, "send", func() error { return a.ep.Send(sbuf, smr.Desc(), ab, nil) }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || string(rbuf[:got.Len]) != "described" {
		t.Fatalf("with descriptors: %+v %+v", got, ee)
	}
	if err := b.ep.RecvV([][]byte{rbuf}, []fabric.MRDesc{rmr.Desc()}, fabric.AddrUnspec, nil); err != nil {
		t.Fatalf("recvv with descriptors: %v", err)
	}
	retry(t, "sendv", func() error { return a.ep.SendV([][]byte{sbuf}, []fabric.MRDesc{smr.Desc()}, ab, nil) }, a.txcq)
	if _, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil {
		t.Fatalf("vector ops with descriptors: %+v", ee)
	}
}

// mrAccessBits are the access bits fabtests combines (ft_info_to_mr_access
// plus the local ones).
var mrAccessBits = []fabric.Flags{fabric.FlagSend, fabric.FlagRecv, fabric.FlagRead, fabric.FlagWrite,
	fabric.FlagRemoteRead, fabric.FlagRemoteWrite}

func vaOf(b []byte) uint64 { return uint64(reflect.ValueOf(b).Pointer()) }
