package provider

// TxAttr is fi_tx_attr: transmit context attributes. Zero fields in hints
// are wildcards; in results they are the provider's values.
type TxAttr struct {
	Caps        Caps      // transmit capabilities; subset of Info.Caps
	Mode        Mode      // mode bits the provider requires
	OpFlags     Flags     // default operation flags (FI_INJECT, FI_COMPLETION, completion levels)
	MsgOrder    Order     // message ordering guaranteed
	CompOrder   CompOrder // completion ordering
	InjectSize  uint64    // largest inject; default: provider's
	Size        uint64    // outstanding operations; default: provider's
	IOVLimit    uint64    // max iovec entries per operation
	RMAIOVLimit uint64    // max RMA iovec entries
	TClass      uint32    // traffic class (FI_TC_*)
}

// RxAttr is fi_rx_attr: receive context attributes.
type RxAttr struct {
	Caps              Caps
	Mode              Mode
	OpFlags           Flags // default receive flags (FI_MULTI_RECV, FI_COMPLETION)
	MsgOrder          Order
	CompOrder         CompOrder
	TotalBufferedRecv uint64
	Size              uint64
	IOVLimit          uint64
}

// EPAttr is fi_ep_attr.
type EPAttr struct {
	Type            EPType
	Protocol        Protocol
	ProtocolVersion uint32
	MaxMsgSize      uint64
	MsgPrefixSize   uint64
	MaxOrderRAWSize uint64
	MaxOrderWARSize uint64
	MaxOrderWAWSize uint64
	MemTagFormat    uint64
	TxCtxCnt        uint64 // SharedContext requests a shared transmit context
	RxCtxCnt        uint64 // SharedContext requests a shared receive context
	AuthKey         []byte
}

// DomainAttr is fi_domain_attr.
type DomainAttr struct {
	Name            string
	Threading       Threading
	ControlProgress Progress
	DataProgress    Progress
	ResourceMgmt    ResourceMgmt
	AVType          AVType
	MRMode          MRMode
	MRKeySize       uint64
	CQDataSize      uint64
	CQCnt           uint64
	EPCnt           uint64
	TxCtxCnt        uint64
	RxCtxCnt        uint64
	MaxEPTxCtx      uint64
	MaxEPRxCtx      uint64
	MaxEPStxCtx     uint64
	MaxEPSrxCtx     uint64
	CntrCnt         uint64
	MRIOVLimit      uint64
	Caps            Caps
	Mode            Mode
	AuthKey         []byte
	MaxErrData      uint64
	MRCnt           uint64
	TClass          uint32
}

// FabricAttr is fi_fabric_attr.
type FabricAttr struct {
	Name        string
	ProvName    string
	ProvVersion uint32
	APIVersion  uint32
}

// Info is fi_info: a description of one way to communicate, as returned by
// GetInfo and passed back to the Open calls. Hints use the same type.
type Info struct {
	Caps       Caps
	Mode       Mode
	AddrFormat AddrFormat
	SrcAddr    []byte // provider address format bytes (sockaddr for tcp/udp)
	DestAddr   []byte
	// Handle is a passive endpoint (or connection request) that an active
	// endpoint opened from this Info adopts; nil otherwise. The root package
	// stores its own objects here.
	Handle     any
	TxAttr     *TxAttr
	RxAttr     *RxAttr
	EPAttr     *EPAttr
	DomainAttr *DomainAttr
	FabricAttr *FabricAttr
}

// Dup returns a deep copy of info (fi_dupinfo). Dup of nil returns an Info
// with every attribute structure allocated and zero, as fi_allocinfo does.
func (info *Info) Dup() *Info {
	if info == nil {
		return &Info{TxAttr: &TxAttr{}, RxAttr: &RxAttr{}, EPAttr: &EPAttr{}, DomainAttr: &DomainAttr{},
			FabricAttr: &FabricAttr{}}
	}
	n := *info
	n.SrcAddr = cloneBytes(info.SrcAddr)
	n.DestAddr = cloneBytes(info.DestAddr)
	if info.TxAttr != nil {
		t := *info.TxAttr
		n.TxAttr = &t
	}
	if info.RxAttr != nil {
		r := *info.RxAttr
		n.RxAttr = &r
	}
	if info.EPAttr != nil {
		e := *info.EPAttr
		e.AuthKey = cloneBytes(e.AuthKey)
		n.EPAttr = &e
	}
	if info.DomainAttr != nil {
		d := *info.DomainAttr
		d.AuthKey = cloneBytes(d.AuthKey)
		n.DomainAttr = &d
	}
	if info.FabricAttr != nil {
		f := *info.FabricAttr
		n.FabricAttr = &f
	}
	return &n
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
