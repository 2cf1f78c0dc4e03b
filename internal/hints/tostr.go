package hints

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"strings"

	"github.com/gofabric/fabric/provider"
)

// Bit names in the order libfabric 1.17's fi_tostr prints them. They differ
// from the provider package's tables on purpose: fi_tostr skips bits it has
// no name for (FI_AV_USER_ID, FI_PEER in caps; FI_MSG ... in op_flags),
// prints an empty msg_order as "[  ]" and an unordered comp_order as
// "[ FI_ORDER_NONE ]".
type bitName struct {
	bit  uint64
	name string
}

var tostrCaps = []bitName{
	{1 << 1, "FI_MSG"}, {1 << 2, "FI_RMA"}, {1 << 3, "FI_TAGGED"}, {1 << 4, "FI_ATOMIC"},
	{1 << 5, "FI_MULTICAST"}, {1 << 6, "FI_COLLECTIVE"},
	{1 << 8, "FI_READ"}, {1 << 9, "FI_WRITE"}, {1 << 10, "FI_RECV"}, {1 << 11, "FI_SEND"},
	{1 << 12, "FI_REMOTE_READ"}, {1 << 13, "FI_REMOTE_WRITE"},
	{1 << 16, "FI_MULTI_RECV"}, {1 << 17, "FI_REMOTE_CQ_DATA"}, {1 << 20, "FI_TRIGGER"}, {1 << 21, "FI_FENCE"},
	{1 << 48, "FI_VARIABLE_MSG"}, {1 << 49, "FI_RMA_PMEM"}, {1 << 50, "FI_SOURCE_ERR"},
	{1 << 51, "FI_LOCAL_COMM"}, {1 << 52, "FI_REMOTE_COMM"}, {1 << 53, "FI_SHARED_AV"},
	{1 << 56, "FI_RMA_EVENT"}, {1 << 57, "FI_SOURCE"}, {1 << 58, "FI_NAMED_RX_CTX"},
	{1 << 59, "FI_DIRECTED_RECV"}, {1 << 47, "FI_HMEM"},
}

var tostrMode = []bitName{
	{1 << 59, "FI_CONTEXT"}, {1 << 58, "FI_MSG_PREFIX"}, {1 << 57, "FI_ASYNC_IOV"}, {1 << 56, "FI_RX_CQ_DATA"},
	{1 << 55, "FI_LOCAL_MR"}, {1 << 54, "FI_NOTIFY_FLAGS_ONLY"}, {1 << 53, "FI_RESTRICTED_COMP"},
	{1 << 52, "FI_CONTEXT2"}, {1 << 51, "FI_BUFFERED_RECV"},
}

var tostrOpFlags = []bitName{
	{1 << 5, "FI_MULTICAST"}, {1 << 16, "FI_MULTI_RECV"}, {1 << 17, "FI_REMOTE_CQ_DATA"}, {1 << 18, "FI_MORE"},
	{1 << 19, "FI_PEEK"}, {1 << 20, "FI_TRIGGER"}, {1 << 21, "FI_FENCE"}, {1 << 24, "FI_COMPLETION"},
	{1 << 25, "FI_INJECT"}, {1 << 26, "FI_INJECT_COMPLETE"}, {1 << 27, "FI_TRANSMIT_COMPLETE"},
	{1 << 28, "FI_DELIVERY_COMPLETE"}, {1 << 31, "FI_MATCH_COMPLETE"}, {1 << 29, "FI_AFFINITY"},
	{1 << 59, "FI_CLAIM"}, {1 << 58, "FI_DISCARD"},
}

var tostrMsgOrder = []bitName{
	{1 << 0, "FI_ORDER_RAR"}, {1 << 1, "FI_ORDER_RAW"}, {1 << 2, "FI_ORDER_RAS"}, {1 << 3, "FI_ORDER_WAR"},
	{1 << 4, "FI_ORDER_WAW"}, {1 << 5, "FI_ORDER_WAS"}, {1 << 6, "FI_ORDER_SAR"}, {1 << 7, "FI_ORDER_SAW"},
	{1 << 8, "FI_ORDER_SAS"}, {1 << 32, "FI_ORDER_RMA_RAR"}, {1 << 33, "FI_ORDER_RMA_RAW"},
	{1 << 34, "FI_ORDER_RMA_WAR"}, {1 << 35, "FI_ORDER_RMA_WAW"}, {1 << 36, "FI_ORDER_ATOMIC_RAR"},
	{1 << 37, "FI_ORDER_ATOMIC_RAW"}, {1 << 38, "FI_ORDER_ATOMIC_WAR"}, {1 << 39, "FI_ORDER_ATOMIC_WAW"},
}

var tostrMRMode = []bitName{
	{1 << 0, "FI_MR_BASIC"}, {1 << 1, "FI_MR_SCALABLE"}, {1 << 2, "FI_MR_LOCAL"}, {1 << 3, "FI_MR_RAW"},
	{1 << 4, "FI_MR_VIRT_ADDR"}, {1 << 5, "FI_MR_ALLOCATED"}, {1 << 6, "FI_MR_PROV_KEY"},
	{1 << 7, "FI_MR_MMU_NOTIFY"}, {1 << 8, "FI_MR_RMA_EVENT"}, {1 << 9, "FI_MR_ENDPOINT"},
	{1 << 10, "FI_MR_HMEM"}, {1 << 11, "FI_MR_COLLECTIVE"},
}

// bitList renders v as fi_tostr renders a flag set: the names of the set
// bits that table knows, separated by ", " ("FI_MSG, FI_RMA").
func bitList(v uint64, table []bitName) string {
	var b strings.Builder
	for _, bn := range table {
		if v&bn.bit != 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(bn.name)
		}
	}
	return b.String()
}

func bracket(s string) string { return "[ " + s + " ]" }

func compOrder(o provider.CompOrder) string {
	var parts []string
	switch o & provider.CompOrderStrict {
	case 0:
		parts = append(parts, "FI_ORDER_NONE")
	case provider.CompOrderStrict:
		parts = append(parts, "FI_ORDER_STRICT")
	}
	if o&provider.CompOrderData != 0 {
		parts = append(parts, "FI_ORDER_DATA")
	}
	return strings.Join(parts, ", ")
}

// enumName renders an enumeration value as fi_tostr does: its name, or
// "Unknown". The provider package's String methods print "Type(n)" for a
// value without a name.
func enumName(s string) string {
	if strings.HasSuffix(s, ")") {
		return "Unknown"
	}
	return s
}

func protocolName(p provider.Protocol) string {
	// FI_PROTO_MXM (7) and FI_PROTO_MRAIL (17) have no fi_tostr name in 1.17.
	if p == 7 || p == 17 {
		return "Unknown"
	}
	return enumName(p.String())
}

func addrFormatName(f provider.AddrFormat) string { return enumName(f.String()) }

func cstr(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func handleString(h any) string {
	if h == nil {
		return "(nil)"
	}
	switch reflect.ValueOf(h).Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func, reflect.Slice:
		return fmt.Sprintf("%p", h)
	}
	return fmt.Sprintf("%v", h)
}

// Linux socket address families as they appear in sockaddr bytes.
const (
	afInet  = 2
	afInet6 = 10
)

// FormatAddr renders address bytes of format f as fi_tostr does
// (ofi_straddr): "fi_sockaddr_in://127.0.0.1:9228",
// "fi_sockaddr_in6://[::1]:9228", the string itself for FI_ADDR_STR. The
// bytes are in the provider's layout: Linux sockaddr_in/sockaddr_in6 with a
// host-order (little-endian) family and network-order port. ok is false
// for formats or bytes it cannot render; fi_tostr then prints nothing.
func FormatAddr(f provider.AddrFormat, b []byte) (s string, ok bool) {
	switch f {
	case provider.SockAddr:
		if len(b) < 2 {
			return "", false
		}
		switch binary.LittleEndian.Uint16(b) {
		case afInet:
			return FormatAddr(provider.SockAddrIn, b)
		case afInet6:
			return FormatAddr(provider.SockAddrIn6, b)
		}
		return "", false
	case provider.SockAddrIn:
		if len(b) < 8 {
			return "", false
		}
		a := netip.AddrFrom4([4]byte(b[4:8]))
		return "fi_sockaddr_in://" + a.String() + ":" + strconv.Itoa(int(binary.BigEndian.Uint16(b[2:4]))), true
	case provider.SockAddrIn6:
		if len(b) < 24 {
			return "", false
		}
		a := netip.AddrFrom16([16]byte(b[8:24]))
		return "fi_sockaddr_in6://[" + a.String() + "]:" + strconv.Itoa(int(binary.BigEndian.Uint16(b[2:4]))), true
	case provider.AddrStr:
		if i := strings.IndexByte(string(b), 0); i >= 0 {
			b = b[:i]
		}
		return string(b), true
	}
	return "", false
}

func addrString(f provider.AddrFormat, b []byte) string {
	if b == nil {
		return "(null)"
	}
	s, _ := FormatAddr(f, b)
	return s
}

// Format renders info exactly as libfabric 1.17's
// fi_tostr(info, FI_TYPE_INFO) does, which is what `fi_info -v` prints for
// each info after its "---" separator. Nil attribute structures print as
// zero ones.
func Format(info *provider.Info) string {
	if info == nil {
		return ""
	}
	c := *info
	Normalize(&c)
	tx, rx, ep, dom, fab := c.TxAttr, c.RxAttr, c.EPAttr, c.DomainAttr, c.FabricAttr
	var b strings.Builder
	line := func(indent int, key, val string) {
		b.WriteString(strings.Repeat("    ", indent))
		b.WriteString(key)
		b.WriteString(": ")
		b.WriteString(val)
		b.WriteByte('\n')
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	hex := func(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

	b.WriteString("fi_info:\n")
	line(1, "caps", bracket(bitList(uint64(c.Caps), tostrCaps)))
	line(1, "mode", bracket(bitList(uint64(c.Mode), tostrMode)))
	line(1, "addr_format", addrFormatName(c.AddrFormat))
	line(1, "src_addrlen", u(uint64(len(c.SrcAddr))))
	line(1, "dest_addrlen", u(uint64(len(c.DestAddr))))
	line(1, "src_addr", addrString(c.AddrFormat, c.SrcAddr))
	line(1, "dest_addr", addrString(c.AddrFormat, c.DestAddr))
	line(1, "handle", handleString(c.Handle))

	b.WriteString("    fi_tx_attr:\n")
	line(2, "caps", bracket(bitList(uint64(tx.Caps), tostrCaps)))
	line(2, "mode", bracket(bitList(uint64(tx.Mode), tostrMode)))
	line(2, "op_flags", bracket(bitList(uint64(tx.OpFlags), tostrOpFlags)))
	line(2, "msg_order", bracket(bitList(uint64(tx.MsgOrder), tostrMsgOrder)))
	line(2, "comp_order", bracket(compOrder(tx.CompOrder)))
	line(2, "inject_size", u(tx.InjectSize))
	line(2, "size", u(tx.Size))
	line(2, "iov_limit", u(tx.IOVLimit))
	line(2, "rma_iov_limit", u(tx.RMAIOVLimit))
	line(2, "tclass", hex(uint64(tx.TClass)))

	b.WriteString("    fi_rx_attr:\n")
	line(2, "caps", bracket(bitList(uint64(rx.Caps), tostrCaps)))
	line(2, "mode", bracket(bitList(uint64(rx.Mode), tostrMode)))
	line(2, "op_flags", bracket(bitList(uint64(rx.OpFlags), tostrOpFlags)))
	line(2, "msg_order", bracket(bitList(uint64(rx.MsgOrder), tostrMsgOrder)))
	line(2, "comp_order", bracket(compOrder(rx.CompOrder)))
	line(2, "total_buffered_recv", u(rx.TotalBufferedRecv))
	line(2, "size", u(rx.Size))
	line(2, "iov_limit", u(rx.IOVLimit))

	b.WriteString("    fi_ep_attr:\n")
	line(2, "type", enumName(ep.Type.String()))
	line(2, "protocol", protocolName(ep.Protocol))
	line(2, "protocol_version", u(uint64(ep.ProtocolVersion)))
	line(2, "max_msg_size", u(ep.MaxMsgSize))
	line(2, "msg_prefix_size", u(ep.MsgPrefixSize))
	line(2, "max_order_raw_size", u(ep.MaxOrderRAWSize))
	line(2, "max_order_war_size", u(ep.MaxOrderWARSize))
	line(2, "max_order_waw_size", u(ep.MaxOrderWAWSize))
	line(2, "mem_tag_format", fmt.Sprintf("0x%016x", ep.MemTagFormat))
	line(2, "tx_ctx_cnt", ctxCnt(ep.TxCtxCnt))
	line(2, "rx_ctx_cnt", ctxCnt(ep.RxCtxCnt))
	line(2, "auth_key_size", u(uint64(len(ep.AuthKey))))

	b.WriteString("    fi_domain_attr:\n")
	line(2, "domain", "0x0")
	line(2, "name", cstr(dom.Name))
	line(2, "threading", enumName(dom.Threading.String()))
	line(2, "control_progress", enumName(dom.ControlProgress.String()))
	line(2, "data_progress", enumName(dom.DataProgress.String()))
	line(2, "resource_mgmt", enumName(dom.ResourceMgmt.String()))
	line(2, "av_type", enumName(dom.AVType.String()))
	line(2, "mr_mode", bracket(bitList(uint64(dom.MRMode), tostrMRMode)))
	line(2, "mr_key_size", u(dom.MRKeySize))
	line(2, "cq_data_size", u(dom.CQDataSize))
	line(2, "cq_cnt", u(dom.CQCnt))
	line(2, "ep_cnt", u(dom.EPCnt))
	line(2, "tx_ctx_cnt", u(dom.TxCtxCnt))
	line(2, "rx_ctx_cnt", u(dom.RxCtxCnt))
	line(2, "max_ep_tx_ctx", u(dom.MaxEPTxCtx))
	line(2, "max_ep_rx_ctx", u(dom.MaxEPRxCtx))
	line(2, "max_ep_stx_ctx", u(dom.MaxEPStxCtx))
	line(2, "max_ep_srx_ctx", u(dom.MaxEPSrxCtx))
	line(2, "cntr_cnt", u(dom.CntrCnt))
	line(2, "mr_iov_limit", u(dom.MRIOVLimit))
	line(2, "caps", bracket(bitList(uint64(dom.Caps), tostrCaps)))
	line(2, "mode", bracket(bitList(uint64(dom.Mode), tostrMode)))
	line(2, "auth_key_size", u(uint64(len(dom.AuthKey))))
	line(2, "max_err_data", u(dom.MaxErrData))
	line(2, "mr_cnt", u(dom.MRCnt))
	line(2, "tclass", hex(uint64(dom.TClass)))

	b.WriteString("    fi_fabric_attr:\n")
	line(2, "name", cstr(fab.Name))
	line(2, "prov_name", cstr(fab.ProvName))
	line(2, "prov_version", provider.VersionString(fab.ProvVersion))
	line(2, "api_version", provider.VersionString(fab.APIVersion))
	line(1, "nic", "(nil)")
	return b.String()
}

// ctxCnt prints an ep_attr tx_ctx_cnt or rx_ctx_cnt as fi_tostr does:
// FI_SHARED_CONTEXT by name, any other count as a number.
func ctxCnt(v uint64) string {
	if v == provider.SharedContext {
		return "FI_SHARED_CONTEXT"
	}
	return strconv.FormatUint(v, 10)
}
