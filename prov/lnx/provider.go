package lnx

import (
	"errors"
	"os"
	"strings"
	"sync"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

const (
	// Name is the provider name.
	Name = "lnx"
	// EnvLinks names the linked providers (libfabric 2.x's
	// FI_LNX_PROV_LINKS). Accepted: "shm+tcp" (the default when unset or
	// empty) and its spellings "tcp+shm", "shm+tcp;ofi_rxm" and
	// "tcp;ofi_rxm+shm" (tcp's RDM endpoint is what libfabric calls
	// tcp;ofi_rxm). Any other value makes GetInfo answer FI_ENODATA with
	// the reason.
	EnvLinks = "FI_LNX_PROV_LINKS"
	// DefaultLinks is the link used when EnvLinks is unset.
	DefaultLinks = "shm+tcp"

	localProv  = "shm"
	remoteProv = "tcp"
)

// Capabilities lnx offers where both linked providers do (the intersection
// of the two fi_info answers is taken as well).
const (
	lnxCaps = provider.CapMsg | provider.CapTagged | provider.CapSend | provider.CapRecv |
		provider.CapSource | provider.CapSourceErr | provider.CapDirectedRecv | provider.CapMultiRecv | rmaCaps
	rmaCaps = provider.CapRMA | provider.CapAtomic | provider.CapRead | provider.CapWrite |
		provider.CapRemoteRead | provider.CapRemoteWrite | provider.CapRMAEvent
	domainCaps = provider.CapLocalComm | provider.CapRemoteComm
	// subCaps are always asked of the linked endpoints: sources are
	// resolved on every path, so that directed receives and FI_SOURCE
	// work whichever path delivers; FI_MULTI_RECV so that their answers
	// tell whether lnx may offer it (multi-receive buffers are the root
	// receive queue's, which both paths match against).
	subCaps = provider.CapSource | provider.CapDirectedRecv | provider.CapMultiRecv
)

// Version is the provider version.
var Version = provider.Version(117, 0)

func init() { provider.Register(lnxProvider{}) }

type lnxProvider struct{}

var _ provider.Provider = lnxProvider{}

func (lnxProvider) Name() string    { return Name }
func (lnxProvider) Version() uint32 { return Version }

// Params lists the environment variables lnx reads (fi_info -e).
func (lnxProvider) Params() []provider.Param {
	return []provider.Param{
		{Name: EnvLinks, Type: provider.ParamString, Help: "Linked providers: shm+tcp (default)"},
		{Name: EnvHostID, Type: provider.ParamString,
			Help: "Host identity of the endpoints opened (default: boot id and network namespace); peers of another identity are reached over tcp"},
		{Name: EnvDisableSHM, Type: provider.ParamBool, Help: "Reach local peers over tcp too"},
	}
}

// checkLinks validates EnvLinks.
func checkLinks() error {
	v := strings.ToLower(strings.TrimSpace(os.Getenv(EnvLinks)))
	if v == "" {
		return nil
	}
	parts := strings.Split(v, "+")
	if len(parts) != 2 {
		return errors.New(EnvLinks + "=" + v + ": want two providers joined by +, e.g. " + DefaultLinks)
	}
	var shm, tcp bool
	for _, p := range parts {
		switch strings.TrimSpace(p) {
		case "shm":
			shm = true
		case "tcp", "tcp;ofi_rxm":
			tcp = true
		default:
			return errors.New(EnvLinks + "=" + v + ": unsupported link " + p + " (only " + DefaultLinks + ")")
		}
	}
	if !shm || !tcp {
		return errors.New(EnvLinks + "=" + v + ": want " + DefaultLinks)
	}
	return nil
}

type linkErr struct{ msg string }

func (e *linkErr) Error() string { return e.msg }
func (e *linkErr) Unwrap() error { return provider.ENODATA }

// subHints are the hints for a linked provider.
func subHints(prov string, caps provider.Caps, hints *provider.Info) *provider.Info {
	h := fabric.AllocInfo()
	h.FabricAttr.ProvName = prov
	h.EPAttr.Type = provider.EPRDM
	h.Caps = caps&lnxCaps | subCaps
	switch {
	case caps == 0:
		// Nothing asked: all of lnx's, secondary ones included.
		h.Caps = lnxCaps
	case caps&(provider.CapMsg|provider.CapTagged|provider.CapRMA|provider.CapAtomic) == 0:
		// No primary capability asked: all of lnx's primary ones.
		h.Caps |= provider.CapMsg | provider.CapTagged | provider.CapRMA | provider.CapAtomic
	}
	if hints != nil && hints.TxAttr != nil {
		// Default transmit flags (FI_INJECT, FI_DELIVERY_COMPLETE ...):
		// lnx offers those both linked providers echo.
		h.TxAttr.OpFlags = hints.TxAttr.OpFlags
	}
	if hints != nil && hints.DomainAttr != nil {
		h.DomainAttr.DataProgress = hints.DomainAttr.DataProgress
		h.DomainAttr.ControlProgress = hints.DomainAttr.ControlProgress
		h.DomainAttr.ResourceMgmt = hints.DomainAttr.ResourceMgmt
	}
	return h
}

// linked asks both linked providers for their RDM configuration.
func linked(version uint32, node, service string, flags provider.Flags, hints *provider.Info) (shm, tcp *provider.Info, err error) {
	if err := checkLinks(); err != nil {
		return nil, nil, &linkErr{err.Error()}
	}
	var caps provider.Caps
	if hints != nil {
		caps = hints.Caps
	}
	shms, err := fabric.GetInfoProvider(localProv, version, "", "", 0, subHints(localProv, caps, hints))
	if err != nil {
		return nil, nil, &linkErr{"linked provider " + localProv + ": " + err.Error()}
	}
	tcps, err := fabric.GetInfoProvider(remoteProv, version, node, service, flags, subHints(remoteProv, caps, hints))
	if err != nil {
		return nil, nil, &linkErr{"linked provider " + remoteProv + ": " + err.Error()}
	}
	return shms[0], tcps[0], nil
}

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// GetInfo answers FI_EP_RDM configurations: the intersection of what shm
// and tcp's RDM endpoint offer, within lnxCaps.
func (lnxProvider) GetInfo(version uint32, node, service string, flags provider.Flags, hints *provider.Info) ([]*provider.Info, error) {
	if hints != nil && hints.EPAttr != nil && hints.EPAttr.Type != provider.EPUnspec && hints.EPAttr.Type != provider.EPRDM {
		return nil, &linkErr{"ep_attr.type: " + hints.EPAttr.Type.String() + " not supported (provider: FI_EP_RDM)"}
	}
	if hints != nil && hints.AddrFormat != provider.FormatUnspec && hints.AddrFormat != provider.AddrStr {
		return nil, &linkErr{"addr_format: " + hints.AddrFormat.String() + " not supported (provider: FI_ADDR_STR)"}
	}
	s, t, err := linked(version, node, service, flags, hints)
	if err != nil {
		return nil, err
	}
	info := t.Dup()
	want := lnxCaps
	if hints != nil && hints.Caps != 0 {
		// Secondary capabilities as asked for, like shm and tcp.
		want &^= (provider.CapSource | provider.CapDirectedRecv) &^ hints.Caps
	}
	if hints == nil || hints.Caps&provider.CapSourceErr == 0 {
		// FI_SOURCE_ERR changes what completions look like: only when
		// asked for (srcerr.go).
		want &^= provider.CapSourceErr
	}
	info.Caps = s.Caps&t.Caps&want | domainCaps
	info.TxAttr.Caps = s.TxAttr.Caps & t.TxAttr.Caps & want
	info.RxAttr.Caps = s.RxAttr.Caps & t.RxAttr.Caps & want
	info.TxAttr.OpFlags = s.TxAttr.OpFlags & t.TxAttr.OpFlags
	info.TxAttr.MsgOrder = s.TxAttr.MsgOrder & t.TxAttr.MsgOrder
	info.RxAttr.MsgOrder = s.RxAttr.MsgOrder & t.RxAttr.MsgOrder
	info.TxAttr.CompOrder = provider.CompOrderNone
	info.RxAttr.CompOrder = provider.CompOrderNone
	info.TxAttr.InjectSize = min64(s.TxAttr.InjectSize, t.TxAttr.InjectSize)
	info.TxAttr.Size = min64(s.TxAttr.Size, t.TxAttr.Size)
	info.TxAttr.IOVLimit = min64(s.TxAttr.IOVLimit, t.TxAttr.IOVLimit)
	info.TxAttr.RMAIOVLimit = min64(s.TxAttr.RMAIOVLimit, t.TxAttr.RMAIOVLimit)
	info.RxAttr.Size = min64(s.RxAttr.Size, t.RxAttr.Size)
	info.RxAttr.IOVLimit = min64(s.RxAttr.IOVLimit, t.RxAttr.IOVLimit)
	info.RxAttr.OpFlags = 0
	info.RxAttr.TotalBufferedRecv = 0
	info.EPAttr.MaxMsgSize = min64(s.EPAttr.MaxMsgSize, t.EPAttr.MaxMsgSize)
	info.EPAttr.Protocol = provider.ProtoUnspec
	info.EPAttr.ProtocolVersion = 1
	info.EPAttr.MaxOrderRAWSize, info.EPAttr.MaxOrderWARSize, info.EPAttr.MaxOrderWAWSize = 0, 0, 0
	info.DomainAttr.Name = DefaultLinks
	info.DomainAttr.Caps = domainCaps
	info.DomainAttr.CQDataSize = min64(s.DomainAttr.CQDataSize, t.DomainAttr.CQDataSize)
	info.DomainAttr.Threading = provider.ThreadSafe
	// No scalable endpoints or shared transmit contexts (yet): one
	// context each way, whatever the linked providers could do.
	info.DomainAttr.MaxEPStxCtx = 0
	info.DomainAttr.MaxEPTxCtx, info.DomainAttr.MaxEPRxCtx = 1, 1
	info.EPAttr.TxCtxCnt, info.EPAttr.RxCtxCnt = 1, 1
	info.FabricAttr.Name = Name
	info.FabricAttr.ProvName = Name
	info.FabricAttr.ProvVersion = Version
	info.AddrFormat = provider.AddrStr
	info.SrcAddr = addr{host: hostID(), tcp: t.SrcAddr}.encode()
	info.DestAddr = nil
	if t.DestAddr != nil {
		// A destination named by node/service: its host and shm
		// address are unknown, it is reached over tcp.
		info.DestAddr = addr{tcp: t.DestAddr}.encode()
	}
	info.Handle = nil
	return []*provider.Info{info}, nil
}

// Fabric opens an lnx fabric; the linked fabrics are opened with each
// domain.
func (lnxProvider) Fabric(*provider.FabricAttr) (provider.Fabric, error) {
	if err := checkLinks(); err != nil {
		return nil, &linkErr{err.Error()}
	}
	return &lnxFabric{}, nil
}

type lnxFabric struct{}

func (*lnxFabric) Close() error { return nil }

// domain is an lnx domain: a tcp domain, which owns the memory
// registrations, and an shm domain importing it (fi_peer(3) peer domain).
type domain struct {
	shmInfo, tcpInfo *provider.Info
	shmFab, tcpFab   *fabric.Fabric
	shmDom, tcpDom   *fabric.Domain

	atomicsOnce sync.Once
	atomics     *atomicTable // see QueryAtomic
}

// Domain opens the linked fabrics and domains for info.
func (*lnxFabric) Domain(info *provider.Info) (provider.Domain, error) {
	d := &domain{}
	var err error
	if d.shmInfo, d.tcpInfo, err = linked(fabric.APIVersion, "", "", 0, info); err != nil {
		return nil, err
	}
	if a, ok := parseAddr(info.SrcAddr); ok && a.tcp != nil {
		d.tcpInfo.SrcAddr = a.tcp
	}
	if info.DomainAttr != nil && info.DomainAttr.ResourceMgmt != provider.RMUnspec {
		// The linked domains manage resources as the lnx domain does:
		// they reserve room in the lnx CQs (CQReserver) only under
		// FI_RM_ENABLED.
		d.shmInfo.DomainAttr.ResourceMgmt = info.DomainAttr.ResourceMgmt
		d.tcpInfo.DomainAttr.ResourceMgmt = info.DomainAttr.ResourceMgmt
	}
	if d.tcpFab, err = fabric.Open(d.tcpInfo); err != nil {
		return nil, err
	}
	if d.tcpDom, err = d.tcpFab.OpenDomain(d.tcpInfo); err != nil {
		d.tcpFab.Close()
		return nil, err
	}
	if d.shmFab, err = fabric.Open(d.shmInfo); err != nil {
		d.tcpDom.Close()
		d.tcpFab.Close()
		return nil, err
	}
	if d.shmDom, err = d.shmFab.OpenPeerDomain(d.shmInfo, &peer.DomainContext{Domain: d.tcpDom}); err != nil {
		d.shmFab.Close()
		d.tcpDom.Close()
		d.tcpFab.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the linked domains and fabrics.
func (d *domain) Close() error {
	return errors.Join(d.shmDom.Close(), d.shmFab.Close(), d.tcpDom.Close(), d.tcpFab.Close())
}
