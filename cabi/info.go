package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// fi_info conversion, both ways, in this one place. The Go constants
// (caps, mode, flags, enums) have libfabric's numeric values (checked
// against the C macros by consts.go and its test), so fields convert by
// plain numeric conversion.

// gofab_getinfo is the getinfo of the provider in slot (provider.c).
//
//export gofab_getinfo
func gofab_getinfo(slot C.int, version C.uint32_t, node, service *C.char, flags C.uint64_t,
	hints *C.struct_fi_info, out **C.struct_fi_info) (rc C.int) {
	defer recoverRC("fi_getinfo", &rc)
	if out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	if slot < 0 || int(slot) >= len(provNames) {
		return -C.FI_EINVAL
	}
	pn := provNames[slot]
	var h *fabric.Info // nil hints: every configuration, as in C
	if hints != nil {
		var err error
		if h, err = infoFromC(hints); err != nil {
			return errno(err)
		}
		// FI_BUFFERED_RECV only when asked for, not as one of all the
		// mode bits (bufrecv.go).
		if !bufferedModeWanted(hints.mode) {
			h.Mode &^= fabric.ModeBufferedRecv
		}
	}
	// Only this slot's provider answers (the C library asks each provider
	// in turn, and applies FI_PROVIDER itself, with the C names).
	infos, err := fabric.GetInfoProvider(pn.goName, uint32(version), C.GoString(node), C.GoString(service),
		fabric.Flags(flags), h)
	if err != nil {
		return errno(err)
	}
	var head *C.struct_fi_info
	tail := &head
	for _, in := range infos {
		// A core provider returns prov_name NULL: the C library sets it
		// (and appends the utility provider's name when it layers one,
		// e.g. ofi_rxm over gotcp).
		if in.FabricAttr != nil {
			in.FabricAttr.ProvName = ""
		}
		ci := infoToC(in)
		if ci == nil {
			C.gofab_freeinfo(head)
			return -C.FI_ENOMEM
		}
		*tail = ci
		tail = &ci.next
	}
	*out = head
	return 0
}

// cstr returns a malloc'd copy of s (C.CString), NULL for "".
func cstr(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

func cbytes(b []byte) (unsafe.Pointer, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return C.CBytes(b), C.size_t(len(b))
}

func gobytes(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return C.GoBytes(p, C.int(n))
}

func calloc[T any]() *T {
	var z T
	return (*T)(C.calloc(1, C.size_t(unsafe.Sizeof(z))))
}

// infoToC returns info as a C fi_info allocated member by member with the
// malloc family (core's fi_freeinfo frees it), the provider name mapped
// to its C name; nil when memory runs out. Handle is the fid of the
// passive endpoint or connection request Info.Handle names (pep.go); nic
// is NULL, as are the fabric and domain back pointers.
func infoToC(info *fabric.Info) *C.struct_fi_info {
	ci := calloc[C.struct_fi_info]()
	if ci == nil {
		return nil
	}
	ok := true
	ci.caps = C.uint64_t(info.Caps)
	ci.mode = C.uint64_t(info.Mode)
	ci.addr_format = C.uint32_t(info.AddrFormat)
	ci.src_addr, ci.src_addrlen = cbytes(info.SrcAddr)
	ci.dest_addr, ci.dest_addrlen = cbytes(info.DestAddr)
	ci.handle = handleToC(info.Handle)
	if t := info.TxAttr; t != nil {
		c := calloc[C.struct_fi_tx_attr]()
		if ok = c != nil; ok {
			c.caps = C.uint64_t(t.Caps)
			c.mode = C.uint64_t(t.Mode)
			c.op_flags = C.uint64_t(t.OpFlags)
			c.msg_order = C.uint64_t(t.MsgOrder)
			c.comp_order = C.uint64_t(t.CompOrder)
			c.inject_size = C.size_t(t.InjectSize)
			c.size = C.size_t(t.Size)
			c.iov_limit = C.size_t(t.IOVLimit)
			c.rma_iov_limit = C.size_t(t.RMAIOVLimit)
			c.tclass = C.uint32_t(t.TClass)
			ci.tx_attr = c
		}
	}
	if r := info.RxAttr; r != nil && ok {
		c := calloc[C.struct_fi_rx_attr]()
		if ok = c != nil; ok {
			c.caps = C.uint64_t(r.Caps)
			c.mode = C.uint64_t(r.Mode)
			c.op_flags = C.uint64_t(r.OpFlags)
			c.msg_order = C.uint64_t(r.MsgOrder)
			c.comp_order = C.uint64_t(r.CompOrder)
			c.total_buffered_recv = C.size_t(r.TotalBufferedRecv)
			c.size = C.size_t(r.Size)
			c.iov_limit = C.size_t(r.IOVLimit)
			ci.rx_attr = c
		}
	}
	if e := info.EPAttr; e != nil && ok {
		c := calloc[C.struct_fi_ep_attr]()
		if ok = c != nil; ok {
			c._type = C.enum_fi_ep_type(e.Type)
			c.protocol = C.uint32_t(e.Protocol)
			c.protocol_version = C.uint32_t(e.ProtocolVersion)
			c.max_msg_size = C.size_t(e.MaxMsgSize)
			c.msg_prefix_size = C.size_t(e.MsgPrefixSize)
			c.max_order_raw_size = C.size_t(e.MaxOrderRAWSize)
			c.max_order_war_size = C.size_t(e.MaxOrderWARSize)
			c.max_order_waw_size = C.size_t(e.MaxOrderWAWSize)
			c.mem_tag_format = C.uint64_t(e.MemTagFormat)
			c.tx_ctx_cnt = C.size_t(e.TxCtxCnt)
			c.rx_ctx_cnt = C.size_t(e.RxCtxCnt)
			p, n := cbytes(e.AuthKey)
			c.auth_key, c.auth_key_size = (*C.uint8_t)(p), n
			ci.ep_attr = c
		}
	}
	if d := info.DomainAttr; d != nil && ok {
		c := calloc[C.struct_fi_domain_attr]()
		if ok = c != nil; ok {
			c.name = cstr(d.Name)
			c.threading = C.enum_fi_threading(d.Threading)
			c.control_progress = C.enum_fi_progress(d.ControlProgress)
			c.data_progress = C.enum_fi_progress(d.DataProgress)
			c.resource_mgmt = C.enum_fi_resource_mgmt(d.ResourceMgmt)
			c.av_type = C.enum_fi_av_type(d.AVType)
			c.mr_mode = C.int(d.MRMode)
			c.mr_key_size = C.size_t(d.MRKeySize)
			c.cq_data_size = C.size_t(d.CQDataSize)
			c.cq_cnt = C.size_t(d.CQCnt)
			c.ep_cnt = C.size_t(d.EPCnt)
			c.tx_ctx_cnt = C.size_t(d.TxCtxCnt)
			c.rx_ctx_cnt = C.size_t(d.RxCtxCnt)
			c.max_ep_tx_ctx = C.size_t(d.MaxEPTxCtx)
			c.max_ep_rx_ctx = C.size_t(d.MaxEPRxCtx)
			c.max_ep_stx_ctx = C.size_t(d.MaxEPStxCtx)
			c.max_ep_srx_ctx = C.size_t(d.MaxEPSrxCtx)
			c.cntr_cnt = C.size_t(d.CntrCnt)
			c.mr_iov_limit = C.size_t(d.MRIOVLimit)
			c.caps = C.uint64_t(d.Caps)
			c.mode = C.uint64_t(d.Mode)
			p, n := cbytes(d.AuthKey)
			c.auth_key, c.auth_key_size = (*C.uint8_t)(p), n
			c.max_err_data = C.size_t(d.MaxErrData)
			c.mr_cnt = C.size_t(d.MRCnt)
			c.tclass = C.uint32_t(d.TClass)
			ci.domain_attr = c
		}
	}
	if f := info.FabricAttr; f != nil && ok {
		c := calloc[C.struct_fi_fabric_attr]()
		if ok = c != nil; ok {
			c.name = cstr(f.Name)
			c.prov_name = cstr(cProvName(f.ProvName))
			c.prov_version = C.uint32_t(f.ProvVersion)
			c.api_version = C.uint32_t(f.APIVersion)
			ci.fabric_attr = c
		}
	}
	if !ok {
		C.gofab_freeinfo(ci)
		return nil
	}
	return ci
}

// infoFromC returns a Go copy of a C fi_info (hints, or the info given to
// fi_domain, fi_endpoint ...): NULL attribute pointers stay nil, the C
// provider name is mapped to the Go one; handle is mapped by handleFromC
// (pep.go).
func infoFromC(ci *C.struct_fi_info) (*fabric.Info, error) {
	if ci == nil {
		return nil, provider.EINVAL
	}
	info := &fabric.Info{
		Caps:       fabric.Caps(ci.caps),
		Mode:       provider.Mode(ci.mode),
		AddrFormat: provider.AddrFormat(ci.addr_format),
		SrcAddr:    gobytes(ci.src_addr, ci.src_addrlen),
		DestAddr:   gobytes(ci.dest_addr, ci.dest_addrlen),
	}
	if h, ok := handleFromC(ci.handle); ok {
		info.Handle = h
	} else {
		return nil, provider.EINVAL // a closed passive endpoint, a consumed request
	}
	if ci.tx_attr != nil {
		info.TxAttr = txAttrFromC(ci.tx_attr)
	}
	if ci.rx_attr != nil {
		info.RxAttr = rxAttrFromC(ci.rx_attr)
	}
	if c := ci.ep_attr; c != nil {
		info.EPAttr = &provider.EPAttr{
			Type: provider.EPType(c._type), Protocol: provider.Protocol(c.protocol),
			ProtocolVersion: uint32(c.protocol_version), MaxMsgSize: uint64(c.max_msg_size),
			MsgPrefixSize: uint64(c.msg_prefix_size), MaxOrderRAWSize: uint64(c.max_order_raw_size),
			MaxOrderWARSize: uint64(c.max_order_war_size), MaxOrderWAWSize: uint64(c.max_order_waw_size),
			MemTagFormat: uint64(c.mem_tag_format), TxCtxCnt: uint64(c.tx_ctx_cnt),
			RxCtxCnt: uint64(c.rx_ctx_cnt),
			AuthKey:  gobytes(unsafe.Pointer(c.auth_key), c.auth_key_size),
		}
	}
	if c := ci.domain_attr; c != nil {
		info.DomainAttr = &provider.DomainAttr{
			Name: C.GoString(c.name), Threading: provider.Threading(c.threading),
			ControlProgress: provider.Progress(c.control_progress),
			DataProgress:    provider.Progress(c.data_progress),
			ResourceMgmt:    provider.ResourceMgmt(c.resource_mgmt), AVType: provider.AVType(c.av_type),
			MRMode: provider.MRMode(c.mr_mode), MRKeySize: uint64(c.mr_key_size),
			CQDataSize: uint64(c.cq_data_size), CQCnt: uint64(c.cq_cnt), EPCnt: uint64(c.ep_cnt),
			TxCtxCnt: uint64(c.tx_ctx_cnt), RxCtxCnt: uint64(c.rx_ctx_cnt),
			MaxEPTxCtx: uint64(c.max_ep_tx_ctx), MaxEPRxCtx: uint64(c.max_ep_rx_ctx),
			MaxEPStxCtx: uint64(c.max_ep_stx_ctx), MaxEPSrxCtx: uint64(c.max_ep_srx_ctx),
			CntrCnt: uint64(c.cntr_cnt), MRIOVLimit: uint64(c.mr_iov_limit),
			Caps: provider.Caps(c.caps), Mode: provider.Mode(c.mode),
			AuthKey:    gobytes(unsafe.Pointer(c.auth_key), c.auth_key_size),
			MaxErrData: uint64(c.max_err_data), MRCnt: uint64(c.mr_cnt), TClass: uint32(c.tclass),
		}
	}
	if c := ci.fabric_attr; c != nil {
		info.FabricAttr = fabricAttrFromC(c)
	}
	return info, nil
}

func fabricAttrFromC(c *C.struct_fi_fabric_attr) *fabric.FabricAttr {
	return &fabric.FabricAttr{
		Name: C.GoString(c.name), ProvName: goProvName(C.GoString(c.prov_name)),
		ProvVersion: uint32(c.prov_version), APIVersion: uint32(c.api_version),
	}
}

func txAttrFromC(c *C.struct_fi_tx_attr) *provider.TxAttr {
	return &provider.TxAttr{
		Caps: provider.Caps(c.caps), Mode: provider.Mode(c.mode), OpFlags: provider.Flags(c.op_flags),
		MsgOrder: provider.Order(c.msg_order), CompOrder: provider.CompOrder(c.comp_order),
		InjectSize: uint64(c.inject_size), Size: uint64(c.size), IOVLimit: uint64(c.iov_limit),
		RMAIOVLimit: uint64(c.rma_iov_limit), TClass: uint32(c.tclass),
	}
}

func rxAttrFromC(c *C.struct_fi_rx_attr) *provider.RxAttr {
	return &provider.RxAttr{
		Caps: provider.Caps(c.caps), Mode: provider.Mode(c.mode), OpFlags: provider.Flags(c.op_flags),
		MsgOrder: provider.Order(c.msg_order), CompOrder: provider.CompOrder(c.comp_order),
		TotalBufferedRecv: uint64(c.total_buffered_recv), Size: uint64(c.size),
		IOVLimit: uint64(c.iov_limit),
	}
}
