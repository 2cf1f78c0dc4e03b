package tcp

import (
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// The target side of the tcp RMA frames (op 4 write, op 2 read request),
// shared by FI_EP_MSG endpoints and the connections of FI_EP_RDM endpoints
// (rxm passes RMA through to its tcp connections, so both serve the same
// frames).

// rmaWriteLen reports whether the regions of a write frame add up to its
// payload length plen, without overflowing.
func rmaWriteLen(h *tcpwire.Header, plen uint64) bool {
	var sum uint64
	for i := 0; i < h.NumRMA(); i++ {
		l := h.RMA[i].Len
		if sum+l < sum {
			return false
		}
		sum += l
	}
	return sum == plen
}

// rmaResolve resolves the regions of an RMA frame against the domain's
// registrations into dst, each checked for access (FI_REMOTE_WRITE or
// FI_REMOTE_READ), key and range, or returns why one is refused (dst is
// then cleared). Nothing is touched before every region passed.
func rmaResolve(mr provider.MRKeys, h *tcpwire.Header, access provider.Flags, dst [][]byte) provider.Errno {
	for i := 0; i < h.NumRMA(); i++ {
		v := h.RMA[i]
		var err error = provider.EACCES
		var s []byte
		if mr != nil {
			s, err = mr.Access(v.Key, v.Addr, v.Len, access)
		}
		if err == nil && uint64(len(s)) != v.Len {
			err = provider.EINVAL
		}
		if err != nil {
			clear(dst)
			return provider.ErrnoOf(err)
		}
		dst[i] = s
	}
	return 0
}

// rmaServed reports a served access (FI_RMA_EVENT): the counters bound to
// the regions' MRs and the endpoint's remote counter cntr.
func rmaServed(mr provider.MRKeys, cntr provider.CntrOwner, h *tcpwire.Header, access provider.Flags) {
	if mr != nil {
		for i := 0; i < h.NumRMA(); i++ {
			mr.Event(h.RMA[i].Key, access)
		}
	}
	if cntr != nil {
		cntr.Inc()
	}
}
