package tcp

import (
	"github.com/gofabric/fabric/internal/ipaddr"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// RDM limits, as libfabric 1.17's tcp;ofi_rxm reports them
// (`FI_TCP_IFACE=lo fi_info -p 'tcp;ofi_rxm' -t FI_EP_RDM -v`).
const (
	// RDMInjectSize is tx_attr.inject_size of RDM endpoints.
	RDMInjectSize = 64
	// RDMQueueSize is tx_attr.size and rx_attr.size of RDM endpoints.
	RDMQueueSize = 2048
	// RDMMemTagFormat is ep_attr.mem_tag_format of RDM endpoints.
	RDMMemTagFormat = 0xaaaaaaaaaaaaaaaa
	// RDMMaxUnexpected and RDMMaxUnexpectedBytes bound the unexpected
	// messages an RDM endpoint holds (eager payloads plus a fixed cost
	// per message, rendezvous requests included). Beyond them the
	// endpoint stops reading from the connection that brought the next
	// one, so its sender backs up (TCP flow control), until receives
	// take queued messages: nothing is dropped, with or without
	// FI_RM_ENABLED.
	RDMMaxUnexpected      = 16384
	RDMMaxUnexpectedBytes = 64 << 20
)

// RDM capabilities: messages and tagged messages (eager, SAR and
// rendezvous), RMA (read and write, both directions), multi-receive, as
// tcp;ofi_rxm lists them; FI_ATOMIC, FI_RMA_EVENT, FI_FENCE, FI_SOURCE,
// FI_SOURCE_ERR and FI_DIRECTED_RECV when the hints ask for them (rxm too
// offers atomics only when asked).
const (
	rdmTxCaps = provider.CapMsg | provider.CapTagged | provider.CapSend | provider.CapRMA |
		provider.CapRead | provider.CapWrite
	rdmRxCaps = provider.CapMsg | provider.CapTagged | provider.CapRecv | provider.CapMultiRecv |
		provider.CapRMA | provider.CapRemoteRead | provider.CapRemoteWrite
	rdmInfoCaps  = rdmTxCaps | rdmRxCaps | domainCaps
	rdmExtraCaps = provider.CapSource | provider.CapSourceErr | provider.CapDirectedRecv |
		provider.CapAtomic | provider.CapRMAEvent | provider.CapFence | provider.CapNamedRxCtx
	// rdmTxExtra and rdmRxExtra are the extra capabilities of each side.
	rdmTxExtra = provider.CapAtomic | provider.CapFence | provider.CapNamedRxCtx
	rdmRxExtra = provider.CapSource | provider.CapSourceErr | provider.CapDirectedRecv |
		provider.CapAtomic | provider.CapRMAEvent
	// rdmTxOpFlags are the default transmit flags (tx_attr.op_flags) a
	// hint may ask for; they are echoed back (fabtests' fi_msg_inject asks
	// for FI_INJECT or FI_INJECT_COMPLETE, -U for FI_DELIVERY_COMPLETE).
	rdmTxOpFlags = provider.FlagInject | provider.FlagInjectComplete | provider.FlagTransmitComplete |
		provider.FlagDeliveryComplete | provider.FlagCompletion
)

// rdmBaseInfo is the provider's FI_EP_RDM fi_info before addressing.
func rdmBaseInfo(hints *provider.Info) *provider.Info {
	info := baseInfo(nil)
	info.Caps = rdmInfoCaps
	if hints != nil {
		want := hints.Caps
		if hints.RxAttr != nil {
			want |= hints.RxAttr.Caps
		}
		info.Caps |= want & rdmExtraCaps
		if hints.TxAttr != nil {
			info.TxAttr.OpFlags = hints.TxAttr.OpFlags & rdmTxOpFlags
		}
		if d := hints.DomainAttr; d != nil {
			if p := d.ControlProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
				info.DomainAttr.ControlProgress = p
			}
			if p := d.DataProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
				info.DomainAttr.DataProgress = p
			}
		}
	}
	info.TxAttr.Caps = rdmTxCaps | info.Caps&rdmTxExtra
	info.TxAttr.InjectSize = RDMInjectSize
	info.TxAttr.Size = RDMQueueSize
	info.TxAttr.RMAIOVLimit = tcpwire.MaxRMAIOV
	info.TxAttr.CompOrder = provider.CompOrderNone
	info.RxAttr.Caps = rdmRxCaps | info.Caps&rdmRxExtra
	info.RxAttr.Size = RDMQueueSize
	info.RxAttr.TotalBufferedRecv = RDMMaxUnexpectedBytes
	info.RxAttr.CompOrder = provider.CompOrderNone
	info.EPAttr.Type = provider.EPRDM
	info.EPAttr.Protocol = provider.ProtoRXM
	info.EPAttr.ProtocolVersion = 1
	info.EPAttr.MemTagFormat = RDMMemTagFormat
	info.DomainAttr.MaxEPTxCtx, info.DomainAttr.MaxEPRxCtx = MaxEPCtx, MaxEPCtx // scalable.go
	return info
}

var rdmInfoConfig = ipaddr.InfoConfig{Network: "tcp", EPType: provider.EPRDM, IfaceEnv: envIface, Base: rdmBaseInfo, Log: log}
