package sim

import (
	"github.com/gofabric/fabric/internal/stx"
	"github.com/gofabric/fabric/provider"
)

// Provider limits.
const (
	// Name is the provider name.
	Name = "sim"
	// InjectSize is tx_attr.inject_size.
	InjectSize = 4096
	// QueueSize is tx_attr.size and rx_attr.size: the sends an endpoint
	// may have in flight, and the receives it may have posted.
	QueueSize = 1024
	// IOVLimit is tx/rx_attr.iov_limit.
	IOVLimit = 4
	// CQDataSize is domain_attr.cq_data_size.
	CQDataSize = 8
	// MaxMsgSizeRDM is ep_attr.max_msg_size of FI_EP_RDM: every message
	// is copied once at send time, so it is bounded to keep a simulation
	// of many endpoints in memory.
	MaxMsgSizeRDM = 1 << 20
	// MaxMsgSizeDgram is ep_attr.max_msg_size of FI_EP_DGRAM (a UDP
	// datagram's payload).
	MaxMsgSizeDgram = 65507
	// MaxEndpoints is domain_attr.ep_cnt: endpoints per domain.
	MaxEndpoints = 1 << 20
)

// Capabilities. The primary caps (FI_MSG, FI_TAGGED) and the secondary
// FI_SOURCE, FI_DIRECTED_RECV and FI_MULTI_RECV are offered as the hints
// ask for them; without caps in the hints all are listed.
const (
	txCaps     = provider.CapMsg | provider.CapTagged | provider.CapSend
	rxCaps     = provider.CapMsg | provider.CapTagged | provider.CapRecv | provider.CapSource | provider.CapDirectedRecv | provider.CapMultiRecv
	domainCaps = provider.CapLocalComm | provider.CapRemoteComm
	infoCaps   = txCaps | rxCaps | domainCaps
	askCaps    = provider.CapMsg | provider.CapTagged | provider.CapSource | provider.CapDirectedRecv | provider.CapMultiRecv |
		provider.CapRMA | provider.CapAtomic | provider.CapRMAEvent
	// The RMA and atomic capabilities (rma.go, atomic.go), FI_EP_RDM
	// only.
	rmaTxCaps = provider.CapRMA | provider.CapAtomic | provider.CapRead | provider.CapWrite
	rmaRxCaps = provider.CapRMA | provider.CapAtomic | provider.CapRemoteRead | provider.CapRemoteWrite | provider.CapRMAEvent
)

// supportedTxOpFlags are the default transmit flags a hint may ask for.
const supportedTxOpFlags = provider.FlagInject | provider.FlagInjectComplete | provider.FlagTransmitComplete |
	provider.FlagCompletion | provider.FlagDeliveryComplete

// Version is the provider version (FI_VERSION(1, 0)).
var Version = provider.Version(1, 0)

func init() { provider.Register(simProvider{}) }

type simProvider struct{}

var (
	_ provider.Provider    = simProvider{}
	_ provider.AddrHandler = simProvider{}
	_ provider.ParamLister = simProvider{}
)

func (simProvider) Name() string    { return Name }
func (simProvider) Version() uint32 { return Version }

// log is the provider's logger (FI_LOG_LEVEL, FI_LOG_PROV=sim).
var log = provider.NewLogger(Name)

// Params lists the environment variables of the default network.
func (simProvider) Params() []provider.Param {
	return []provider.Param{
		{Name: envSeed, Type: provider.ParamSize, Help: "Seed of the default network's random numbers (loss, jitter)"},
		{Name: envLatency, Type: provider.ParamString, Help: "One-way latency of every link, a Go duration (default 0)"},
		{Name: envJitter, Type: provider.ParamString, Help: "Uniform random extra delay per message, a Go duration (default 0)"},
		{Name: envBandwidth, Type: provider.ParamString, Help: "Bandwidth of every link in bytes per second (default 0: infinite)"},
		{Name: envLoss, Type: provider.ParamString, Help: "Probability that a transmission is lost (DGRAM: dropped; RDM: retransmitted)"},
		{Name: envRTO, Type: provider.ParamString, Help: "RDM retransmission delay after a loss, a Go duration (default 2*latency+1us)"},
		{Name: envCrossProcess, Type: provider.ParamBool, Help: "Join the default networks of the host's processes (unix datagram sockets; not deterministic) (default 0)"},
	}
}

// baseInfo is the provider's fi_info for one endpoint type and hints.
// FI_DELIVERY_COMPLETE is a default transmit flag of FI_EP_RDM when dc
// (cross-process networks: a process's progress is its own).
func baseInfo(epType provider.EPType, network string, buffered int64, dc bool, hints *provider.Info) *provider.Info {
	caps, tx, rx := provider.Caps(infoCaps), provider.Caps(txCaps), provider.Caps(rxCaps)
	rmaIOV := uint64(0)
	if epType == provider.EPRDM {
		caps |= rmaTxCaps | rmaRxCaps
		tx |= rmaTxCaps
		rx |= rmaRxCaps
		rmaIOV = RMAIOVLimit
	}
	var txOpFlags provider.Flags
	threading, rm := provider.ThreadSafe, provider.RMEnabled
	if hints != nil {
		want := hints.Caps
		if hints.TxAttr != nil {
			want |= hints.TxAttr.Caps
			txOpFlags = hints.TxAttr.OpFlags & supportedTxOpFlags
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
		if d := hints.DomainAttr; d != nil {
			if d.Threading != provider.ThreadUnspec {
				threading = d.Threading // every model is safe here
			}
			if d.ResourceMgmt == provider.RMDisabled {
				rm = provider.RMDisabled
			}
		}
	}
	if epType != provider.EPRDM || !dc {
		txOpFlags &^= provider.FlagDeliveryComplete
	}
	maxMsg, order := uint64(MaxMsgSizeRDM), provider.OrderSAS
	if epType == provider.EPDgram {
		maxMsg, order = MaxMsgSizeDgram, provider.OrderNone
	}
	return &provider.Info{
		Caps:       caps,
		AddrFormat: provider.AddrStr,
		TxAttr: &provider.TxAttr{
			Caps:        tx,
			OpFlags:     txOpFlags,
			MsgOrder:    order,
			CompOrder:   provider.CompOrderNone,
			InjectSize:  InjectSize,
			Size:        QueueSize,
			IOVLimit:    IOVLimit,
			RMAIOVLimit: rmaIOV,
		},
		RxAttr: &provider.RxAttr{
			Caps:              rx,
			MsgOrder:          order,
			CompOrder:         provider.CompOrderNone,
			TotalBufferedRecv: uint64(buffered),
			Size:              QueueSize,
			IOVLimit:          IOVLimit,
		},
		EPAttr: &provider.EPAttr{
			Type:         epType,
			Protocol:     provider.ProtoUnspec,
			MaxMsgSize:   maxMsg,
			MemTagFormat: 0xaaaaaaaaaaaaaaaa,
			TxCtxCnt:     1,
			RxCtxCnt:     1,
		},
		DomainAttr: &provider.DomainAttr{
			Name:            Name,
			Threading:       threading,
			ControlProgress: provider.ProgressAuto,
			DataProgress:    provider.ProgressManual,
			ResourceMgmt:    rm,
			MRIOVLimit:      IOVLimit,
			AVType:          provider.AVUnspec,
			MRKeySize:       8,
			CQDataSize:      CQDataSize,
			CQCnt:           MaxEndpoints,
			EPCnt:           MaxEndpoints,
			TxCtxCnt:        MaxEndpoints,
			RxCtxCnt:        MaxEndpoints,
			MaxEPTxCtx:      1,
			MaxEPRxCtx:      1,
			MaxEPStxCtx:     MaxEndpoints,
			MaxEPSrxCtx:     MaxEndpoints,
			Caps:            domainCaps,
		},
		FabricAttr: &provider.FabricAttr{
			Name:        network,
			ProvName:    Name,
			ProvVersion: Version,
			APIVersion:  provider.APIVersion,
		},
	}
}

// GetInfo returns one Info per endpoint type (FI_EP_RDM, then
// FI_EP_DGRAM) the hints allow, on the network the hints' fabric name
// names (the default network "sim" otherwise). Addresses (FI_ADDR_STR):
// src_addr is the "any" name unless node/service with FI_SOURCE, or the
// hints' src_addr, name an endpoint; node/service without FI_SOURCE name
// dest_addr (this host without a service: the endpoint of service 0).
// node is a sim name ("fi_sim://<16 hex>") or this host ("",
// "localhost", a loopback address); a decimal service names the endpoint
// of that service (see serviceID). FI_PROGRESS_AUTO data progress is not
// offered (ENODATA).
func (simProvider) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	network := DefaultName
	types := []provider.EPType{provider.EPRDM, provider.EPDgram}
	if hints != nil {
		if hints.EPAttr != nil && hints.EPAttr.Type != provider.EPUnspec {
			switch hints.EPAttr.Type {
			case provider.EPRDM, provider.EPDgram:
				types = []provider.EPType{hints.EPAttr.Type}
			default:
				return nil, provider.ENODATA
			}
		}
		if hints.AddrFormat != provider.FormatUnspec && hints.AddrFormat != provider.AddrStr {
			return nil, provider.ENODATA
		}
		if d := hints.DomainAttr; d != nil && d.DataProgress == provider.ProgressAuto {
			return nil, provider.ENODATA
		}
		if f := hints.FabricAttr; f != nil && f.Name != "" {
			network = f.Name
		}
	}
	nw := lookupNetwork(network)
	if nw == nil {
		return nil, provider.ENODATA
	}
	src := appendName(nil, 0)
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
			// This host without a service: the endpoint of service 0
			// (dest_addr must name an endpoint), as shm does.
			dest = appendName(nil, serviceBase)
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
	out := make([]*provider.Info, 0, len(types))
	for _, t := range types {
		info := baseInfo(t, network, nw.maxUnexp, nw.cfg.CrossProcess, hints)
		info.SrcAddr = append([]byte(nil), src...)
		if dest != nil {
			info.DestAddr = append([]byte(nil), dest...)
		}
		out = append(out, info)
	}
	return out, nil
}

// Fabric opens a fabric on the network attr.Name names (the default
// network when empty); an unknown name is ENODATA.
func (simProvider) Fabric(attr *provider.FabricAttr) (provider.Fabric, error) {
	name := DefaultName
	if attr != nil && attr.Name != "" {
		name = attr.Name
	}
	n := lookupNetwork(name)
	if n == nil {
		return nil, provider.ENODATA
	}
	return &fabric{n: n}, nil
}

type fabric struct{ n *Network }

func (f *fabric) Domain(info *provider.Info) (provider.Domain, error) {
	if info != nil && info.EPAttr != nil {
		switch info.EPAttr.Type {
		case provider.EPUnspec, provider.EPRDM, provider.EPDgram:
		default:
			return nil, provider.EINVAL
		}
	}
	d := &domain{n: f.n, atomics: true}
	if info != nil {
		dgram := info.EPAttr != nil && info.EPAttr.Type == provider.EPDgram
		d.atomics = !dgram && (info.Caps == 0 || info.Caps&provider.CapAtomic != 0)
	}
	return d, nil
}

func (*fabric) Close() error { return nil }

type domain struct {
	n *Network
	// atomics: the domain was opened for FI_EP_RDM with FI_ATOMIC
	// (fi_query_atomic answers ENOSYS otherwise).
	atomics bool
}

var _ provider.SharedTxDomain = (*domain)(nil)

func (d *domain) Endpoint(info *provider.Info) (provider.Endpoint, error) {
	return newEndpoint(d.n, info)
}

func (*domain) Close() error { return nil }

// SharedTx opens a shared transmit context (fi_stx_context): endpoints
// bound to it keep their own addresses and completions; the context
// bounds the transmit attributes they may use.
func (*domain) SharedTx(attr *provider.TxAttr) (provider.SharedTx, error) {
	return stx.Open(attr, stx.Limits{
		Caps:        txCaps | rmaTxCaps,
		MsgOrder:    provider.OrderSAS,
		InjectSize:  InjectSize,
		Size:        QueueSize,
		IOVLimit:    IOVLimit,
		RMAIOVLimit: RMAIOVLimit,
	})
}
