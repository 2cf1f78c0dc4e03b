package shm

import (
	"os"

	"github.com/gofabric/fabric/provider"
)

// Provider limits and protocol thresholds (tune by measuring; they are
// all here).
const (
	// Name is the provider name.
	Name = "shm"
	// InjectSize is tx_attr.inject_size (as libfabric's shm). An inject
	// rides in one command slot (SlotSize-64 bytes); towards a region
	// with smaller slots one that does not fit is copied into one of its
	// bounce buffers before the call returns.
	InjectSize = 4096
	// QueueSize is tx_attr.size and rx_attr.size.
	QueueSize = 1024
	// IOVLimit is tx/rx_attr.iov_limit.
	IOVLimit = 4
	// CQDataSize is domain_attr.cq_data_size.
	CQDataSize = 8

	// Region sizes: RingSlots command slots of SlotSize bytes (the
	// inline payload limit is SlotSize-64), and Bufs bounce buffers of
	// BufSize bytes (one segment each). Slots of 8 KiB carry messages up
	// to 8128 bytes inline, inject-sized ones (4 KiB) included: they take
	// no bounce buffer, whose free-list head line would otherwise travel
	// between sender and receiver twice per message. A command touches
	// only the lines it fills, so small messages cost the same as in
	// smaller slots. fi_pingpong between two processes, 8 KiB slots
	// against 2 KiB (paired medians of 7, 2026-12-06): 1 B to 1 KiB
	// 0.96-1.00, 2 KiB 0.86, 4 KiB 0.83, 8 KiB 1.00. The ring is 2 MiB
	// of the region file, of which tmpfs allocates the pages touched:
	// the first of every slot at creation (1 MiB), the rest as long
	// messages fill slots.
	RingSlots = 256
	SlotSize  = 8192
	Bufs      = 64
	BufSize   = 32 << 10

	// MaxUnexpectedBytes and MaxUnexpected bound the unexpected messages
	// an endpoint buffers (payload bytes and messages); beyond them it
	// stops draining its command queue until receives are posted
	// (back-pressure: senders see a full queue), and nothing is dropped.
	MaxUnexpectedBytes = 64 << 20
	MaxUnexpected      = 4096
	// CMAMin is the default of FI_SHM_CMA_MIN, the smallest message sent
	// by cross-memory attach (single copy, process_vm_readv by the
	// receiver) to another process where the kernel permits it (cma.go);
	// smaller ones, and all where it does not, are segmented (C 1.17's
	// shm uses CMA above its inject size, 4 KiB). Measured between two
	// processes on the 2-vCPU VM of this project (SCHED_FIFO, medians of
	// 5 interleaved runs; Go fi_pingpong one-way usec, fabtests
	// fi_rdm_tagged_bw GB/s through the plugin; C shm in the same runs):
	//
	//	size   pingpong seg / CMA / C   tagged_bw seg / CMA / C
	//	16K    3.70 / 3.58 / 3.45       6.5 / 4.8 / 5.8
	//	24K    4.95 / 3.93 / 3.92       6.9 / 6.5 / 7.7
	//	32K    6.20 / 4.27 / 4.24       6.6 / 7.8 / 9.0
	//	64K    11.0 / 5.5 / 5.1         7.1 / 10.5 / 11.6
	//
	// (CMA pays a system call of about 1 us here: the sender's id word
	// is read with the data, cma.go.) So from 32 KiB, where CMA wins both;
	// at 24 KiB it wins the pingpong but loses bandwidth. The machine is
	// bimodal (the host moves the two vCPUs): in its fast phases
	// segments take 2.8 us at 64 KiB against 5.4 by CMA (and 5.1 for C),
	// about 0.9 us at 16 KiB; CMA is the safer choice there too.
	CMAMin = 32 << 10
	// CMAMinSameProcess is the smallest message sent by CMA between two
	// endpoints of one process, whatever FI_SHM_CMA_MIN says: there the
	// bounce buffers stay in the caches of the one core doing both
	// copies, and a system call per message costs more than the second
	// copy (BenchmarkPingPong at 64 KiB: 6-10 us segmented, 23-48 us by
	// CMA).
	CMAMinSameProcess = 256 << 10
	// RMACMAMin is the default of FI_SHM_RMA_CMA_MIN, the smallest RMA
	// read or write whose data the target moves by cross-memory attach
	// (rma_cma.go) where the kernel permits it; smaller ones go through
	// bounce buffers. fi_rma_bw between two processes (medians of 5
	// interleaved runs, loaded host): 64 KiB a draw (read 3.2 GB/s
	// segmented, 2.9 CMA, but CMA's worst run 2.2x better), 256 KiB read
	// 1.3 -> 3.3 GB/s and write 1.1 -> 3.7 GB/s; 16 KiB by CMA was 4x
	// slower.
	RMACMAMin = 64 << 10
	// ProgressBudget is the most commands one Progress call handles.
	ProgressBudget = 64
	// MaxPeers bounds the fi_addr values the per-endpoint peer table
	// caches (larger values are looked up under a lock).
	MaxPeers = 1 << 20
)

// Capabilities. The primary ones (FI_MSG, FI_TAGGED, FI_DIRECTED_RECV)
// and the secondary FI_SOURCE, FI_MULTI_RECV and FI_FENCE are offered as asked for
// by the hints; without hints (or without caps in them) all are listed.
const (
	txCaps     = provider.CapMsg | provider.CapTagged | provider.CapSend | provider.CapFence | provider.CapNamedRxCtx | rmaTxCaps
	rxCaps     = provider.CapMsg | provider.CapTagged | provider.CapRecv | provider.CapSource | provider.CapSourceErr | provider.CapDirectedRecv | provider.CapMultiRecv | rmaRxCaps
	domainCaps = provider.CapLocalComm
	infoCaps   = txCaps | rxCaps | domainCaps
	// askCaps are returned only when asked for (when the hints name caps).
	askCaps = provider.CapMsg | provider.CapTagged | provider.CapSource | provider.CapDirectedRecv | provider.CapMultiRecv |
		provider.CapFence | provider.CapRMA | provider.CapAtomic | provider.CapRMAEvent
	// The RMA and atomic capabilities (rma.go, atomic.go).
	rmaTxCaps = provider.CapRMA | provider.CapAtomic | provider.CapRead | provider.CapWrite
	rmaRxCaps = provider.CapRMA | provider.CapAtomic | provider.CapRemoteRead | provider.CapRemoteWrite | provider.CapRMAEvent
)

const rxOrder = provider.OrderSAS

// supportedTxOpFlags are the default transmit flags (tx_attr.op_flags) a
// hint may ask for: they are echoed back.
const supportedTxOpFlags = provider.FlagInject | provider.FlagInjectComplete | provider.FlagTransmitComplete |
	provider.FlagDeliveryComplete | provider.FlagCompletion | provider.FlagFence

// Version is the provider version (117.0, as libfabric 1.17's).
var Version = provider.Version(117, 0)

func init() { provider.Register(shmProvider{}) }

type shmProvider struct{}

var (
	_ provider.Provider    = shmProvider{}
	_ provider.AddrHandler = shmProvider{}
)

func (shmProvider) Name() string    { return Name }
func (shmProvider) Version() uint32 { return Version }

// log is the provider's logger (FI_LOG_LEVEL, FI_LOG_PROV=shm).
var log = provider.NewLogger(Name)

// baseInfo is the provider's fi_info for hints, before addressing.
// Data progress defaults to FI_PROGRESS_MANUAL: CQ and counter reads
// drain the command queue inline (busy-polling shared memory);
// FI_PROGRESS_AUTO adds a goroutine per endpoint.
func baseInfo(hints *provider.Info) *provider.Info {
	ctrl, data := provider.ProgressAuto, provider.ProgressManual
	caps, tx, rx := provider.Caps(infoCaps), provider.Caps(txCaps), provider.Caps(rxCaps)
	var txOpFlags provider.Flags
	if hints != nil {
		if d := hints.DomainAttr; d != nil {
			if p := d.ControlProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
				ctrl = p
			}
			if p := d.DataProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
				data = p
			}
		}
		want := hints.Caps
		if hints.TxAttr != nil {
			want |= hints.TxAttr.Caps
		}
		if hints.RxAttr != nil {
			want |= hints.RxAttr.Caps
			if hints.RxAttr.OpFlags&provider.FlagMultiRecv != 0 {
				want |= provider.CapMultiRecv
			}
		}
		if want != 0 {
			drop := askCaps &^ want
			caps &^= drop
			tx &^= drop
			rx &^= drop
		}
		if hints.TxAttr != nil {
			txOpFlags = hints.TxAttr.OpFlags & supportedTxOpFlags
		}
	}
	// FI_SOURCE_ERR changes what completions look like: only when asked
	// for.
	if hints == nil || hints.Caps&provider.CapSourceErr == 0 {
		caps &^= provider.CapSourceErr
		rx &^= provider.CapSourceErr
	}
	return &provider.Info{
		Caps:       caps,
		AddrFormat: provider.AddrStr,
		TxAttr: &provider.TxAttr{
			Caps:        tx,
			OpFlags:     txOpFlags,
			MsgOrder:    provider.OrderSAS,
			CompOrder:   provider.CompOrderNone,
			InjectSize:  InjectSize,
			Size:        QueueSize,
			IOVLimit:    IOVLimit,
			RMAIOVLimit: RMAIOVLimit,
		},
		RxAttr: &provider.RxAttr{
			Caps:              rx,
			MsgOrder:          rxOrder,
			CompOrder:         provider.CompOrderStrict,
			TotalBufferedRecv: MaxUnexpectedBytes,
			Size:              QueueSize,
			IOVLimit:          IOVLimit,
		},
		EPAttr: &provider.EPAttr{
			Type:            provider.EPRDM,
			Protocol:        provider.ProtoSHM,
			ProtocolVersion: 1,
			MaxMsgSize:      provider.SizeMax,
			MemTagFormat:    0xaaaaaaaaaaaaaaaa,
			TxCtxCnt:        1,
			RxCtxCnt:        1,
		},
		DomainAttr: &provider.DomainAttr{
			Name:            Name,
			Threading:       provider.ThreadSafe,
			ControlProgress: ctrl,
			DataProgress:    data,
			ResourceMgmt:    provider.RMEnabled,
			AVType:          provider.AVUnspec,
			MRKeySize:       8,
			CQDataSize:      CQDataSize,
			CQCnt:           1024,
			EPCnt:           1 << 16,
			TxCtxCnt:        1024,
			RxCtxCnt:        1024,
			MaxEPTxCtx:      MaxEPCtx,
			MaxEPRxCtx:      MaxEPCtx,
			MRIOVLimit:      IOVLimit,
			MaxEPStxCtx:     1 << 16, // stx.go; one STX may serve every endpoint
			MaxEPSrxCtx:     1 << 16,
			Caps:            domainCaps,
		},
		FabricAttr: &provider.FabricAttr{
			Name:        Name,
			ProvName:    Name,
			ProvVersion: Version,
			APIVersion:  provider.APIVersion,
		},
	}
}

// GetInfo returns the one shm configuration. Addresses (FI_ADDR_STR):
// src_addr is the "any" name (an endpoint opened from it picks a random
// one) unless node/service with FI_SOURCE, or the hints' src_addr, name
// one; node/service without FI_SOURCE name dest_addr (this host without a
// service: the endpoint of the empty service). node is a shm name
// ("fi_shm://gofabric-shm-<16 hex>") or this host ("", "localhost", a
// loopback address, the host name); with a service it names the
// endpoint bound to that service (see serviceName). Anything else is
// ENODATA.
func (shmProvider) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	if hints != nil {
		if hints.EPAttr != nil && hints.EPAttr.Type != provider.EPUnspec && hints.EPAttr.Type != provider.EPRDM {
			return nil, provider.ENODATA
		}
		if hints.AddrFormat != provider.FormatUnspec && hints.AddrFormat != provider.AddrStr {
			return nil, provider.ENODATA
		}
	}
	info := baseInfo(hints)
	src := anyName()
	var dest []byte
	if node != "" || service != "" {
		name, err := resolve(node, service)
		if err != nil {
			return nil, err
		}
		switch {
		case flags&provider.FlagSource != 0:
			src = name
		case isAny(name):
			// This host without a service: the endpoint of the empty
			// service (dest_addr must name an endpoint).
			dest = appendName(nil, serviceID(""))
		default:
			dest = name
		}
	}
	if hints != nil {
		if len(hints.SrcAddr) > 0 {
			id, ok := parseName(hints.SrcAddr)
			if !ok {
				return nil, provider.ENODATA
			}
			src = appendName(nil, id)
		}
		if len(hints.DestAddr) > 0 {
			id, ok := parseName(hints.DestAddr)
			if !ok || id == 0 {
				return nil, provider.ENODATA
			}
			dest = appendName(nil, id)
		}
	}
	info.SrcAddr = src
	info.DestAddr = dest
	return []*provider.Info{info}, nil
}

// isAny reports whether name is the "any" name.
func isAny(name []byte) bool {
	id, ok := parseName(name)
	return ok && id == 0
}

// localNode reports whether node names this host.
func localNode(node string) bool {
	switch node {
	case "", "localhost", "localhost.localdomain", "127.0.0.1", "::1", "ip6-localhost":
		return true
	}
	if h, err := os.Hostname(); err == nil && node == h {
		return true
	}
	if len(node) > 4 && node[:4] == "127." {
		return true
	}
	return false
}

// resolve turns node/service into a shm name (fi_av_insertsvc, getinfo).
func resolve(node, service string) ([]byte, error) {
	if id, ok := parseName([]byte(node)); ok {
		if id == 0 {
			return nil, provider.ENODATA
		}
		return appendName(nil, id), nil
	}
	if !localNode(node) {
		return nil, provider.ENODATA
	}
	if service == "" {
		return anyName(), nil
	}
	return appendName(nil, serviceID(service)), nil
}

// Fabric opens a fabric.
func (shmProvider) Fabric(attr *provider.FabricAttr) (provider.Fabric, error) {
	cleanStale()
	cmaProbe()
	return &fabric{}, nil
}

type fabric struct{}

func (*fabric) Domain(info *provider.Info) (provider.Domain, error) {
	if info != nil && info.EPAttr != nil && info.EPAttr.Type != provider.EPUnspec &&
		info.EPAttr.Type != provider.EPRDM {
		return nil, provider.EINVAL
	}
	d := &domain{}
	if info != nil && info.DomainAttr != nil {
		d.authKey = append([]byte(nil), info.DomainAttr.AuthKey...)
		switch info.DomainAttr.Threading {
		case provider.ThreadDomain:
			d.serial = true
		case provider.ThreadCompletion:
			d.serial, d.perCompletion = true, true
		}
	}
	return d, nil
}

func (*fabric) Close() error { return nil }

type domain struct {
	authKey []byte
	// serial: opened with FI_THREAD_DOMAIN or FI_THREAD_COMPLETION, the
	// application serialises the calls on an endpoint with those on its
	// CQs and counters (see endpoint.serial). perCompletion: only those
	// (FI_THREAD_COMPLETION), not with the domain's other objects.
	serial        bool
	perCompletion bool
}

func (d *domain) Endpoint(info *provider.Info) (provider.Endpoint, error) {
	return newEndpoint(d, info)
}

func (*domain) Close() error { return nil }
