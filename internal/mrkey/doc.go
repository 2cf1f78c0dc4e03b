// Package mrkey is the domain-wide memory registration key table
// (fi_mr(3)): it assigns or checks MR keys, records each region's buffers,
// remote address and access rights, checks remote accesses (RMA and
// atomics at the target) and counts remote events on counters bound to a
// region (FI_RMA_EVENT).
//
// # Remote addresses
//
// The remote address of a region's first byte ("base") is offset plus, with
// FI_MR_VIRT_ADDR (Config.VirtAddr), the virtual address of the first
// buffer; without it, 0 (offset-based addressing: fabtests sends address 0
// for the start of the region). A region registered from several buffers
// is addressed as their concatenation; adjacent buffers of one backing
// array are merged, so a buffer split into iovecs (fabtests mr_regv) is one
// segment. The virtual address is taken with reflect.Value.Pointer, which
// needs no unsafe.
//
// # Keys
//
// With FI_MR_PROV_KEY (Config.ProvKey) the table picks keys unique in the
// domain (starting at 1) and ignores the requested key. Otherwise the
// requested key is used: a key already in use gives ENOKEY, a key that does
// not fit in KeySize bytes gives EKEYREJECTED.
//
// # Errors of Access
//
// Unknown key or a region not yet enabled: EKEYREJECTED. Access bits the
// region lacks: EACCES. A range outside the region: EINVAL.
package mrkey
