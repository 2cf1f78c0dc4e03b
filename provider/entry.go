package provider

// CQEntry is one completion, the union of libfabric's fi_cq_*_entry
// formats. Which fields a CQ fills depends on its format: CONTEXT fills
// OpContext; MSG adds Flags and Len; DATA adds Buf and Data; TAGGED adds
// Tag. Fields outside the format are zero.
type CQEntry struct {
	OpContext any    // the context passed with the operation
	Flags     Flags  // completion flags (FI_SEND, FI_RECV, FI_MSG, ...)
	Len       uint64 // bytes transferred (receives, reads)
	Buf       []byte // where a received message was placed (multi-recv)
	Data      uint64 // remote CQ data, valid with FI_REMOTE_CQ_DATA
	Tag       uint64 // tag of a tagged receive
}

// CQErrEntry is fi_cq_err_entry.
type CQErrEntry struct {
	OpContext any
	Flags     Flags
	Len       uint64
	Buf       []byte
	Data      uint64
	Tag       uint64
	Olen      uint64 // bytes that did not fit (FI_ETRUNC)
	Err       Errno  // positive libfabric error number
	ProvErrno int    // provider-specific error number
	ErrData   []byte // provider-specific error data (source address for FI_EADDRNOTAVAIL)
	Src       Addr   // source address for FI_SOURCE (readfrom of an error)
}

// Completion flags a CQ reports (others in an operation's flags are masked off).
const ReportedCompFlags = FlagSend | FlagRecv | FlagRMA | FlagAtomic | FlagMsg | FlagTagged | FlagMulticast |
	FlagRead | FlagWrite | FlagRemoteRead | FlagRemoteWrite | FlagRemoteCQData | FlagMultiRecv | FlagMore |
	FlagClaim | FlagPeek | FlagCollective

// RMAIOV is fi_rma_iov: a remote memory region.
type RMAIOV struct {
	Addr uint64 // virtual address (FI_MR_VIRT_ADDR) or offset into the MR
	Len  uint64
	Key  uint64
}

// Msg describes one data transfer on the provider SPI. The root package
// validates it and fills Flags with the effective flags: FlagCompletion is
// set when a successful completion must be written, FlagInject for inject
// calls, FlagRemoteCQData when Data is to be delivered.
//
// Desc is the memory descriptor of Buf and Descs those of IOV (nil, or one
// per IOV element; an element may be nil): what the application passed,
// unchecked unless the domain has FI_MR_LOCAL, in which case the root
// package has checked that every non-empty buffer lies in a region of the
// domain with the access the operation needs.
type Msg struct {
	Buf     []byte   // the single buffer; used when IOV is nil
	IOV     [][]byte // scatter/gather list
	Desc    MRDesc   // descriptor of Buf, or nil
	Descs   []MRDesc // descriptors of IOV, or nil
	Addr    Addr     // destination (send/RMA) or source filter (recv)
	Context any      // operation context reported in completions
	Data    uint64   // remote CQ data
	Tag     uint64
	Ignore  uint64
	RMA     []RMAIOV // remote regions; RMAOne is used when nil
	RMAOne  RMAIOV
	Flags   Flags
}

// Len returns the total length of m's local buffers.
func (m *Msg) Len() int {
	if m.IOV == nil {
		return len(m.Buf)
	}
	n := 0
	for _, b := range m.IOV {
		n += len(b)
	}
	return n
}

// RMAIOVs returns m's remote regions.
func (m *Msg) RMAIOVs() []RMAIOV {
	if m.RMA != nil {
		return m.RMA
	}
	return nil
}

// EQEntry is one event queue entry (fi_eq_entry / fi_eq_cm_entry).
type EQEntry struct {
	Event   EventType
	FID     any    // the object the event is about (endpoint, passive endpoint, AV, MR)
	Context any    // the object's or operation's context
	Data    uint64 // fi_eq_entry.data (FI_AV_COMPLETE count ...)
	Info    *Info  // FI_CONNREQ: info for opening the endpoint; Handle identifies the request
	CMData  []byte // connection data (FI_CONNREQ, FI_CONNECTED)
}

// EQErrEntry is fi_eq_err_entry.
type EQErrEntry struct {
	FID       any
	Context   any
	Data      uint64
	Err       Errno
	ProvErrno int
	ErrData   []byte // e.g. reject data for FI_ECONNREFUSED
}
