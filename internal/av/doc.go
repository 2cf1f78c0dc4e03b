// Package av implements address vectors (fi_av(3)) for every provider: a
// table of peer addresses indexed by fi_addr_t, with per-address insert
// results, removal and re-insertion, lookup, printing, FI_AV_USER_ID and a
// zero-allocation reverse lookup (address bytes to fi_addr) for FI_SOURCE.
//
// Both FI_AV_TABLE and FI_AV_MAP hand out the same values: the index of the
// address in the table, starting at 0. A new address takes the lowest
// unused index (fi_av(3): "inserted at the lowest index that corresponds to
// an unused table location"), so indices are sequential across insert calls
// until an address is removed, after which its index is reused first. For
// FI_AV_MAP the values are opaque to the application, which libfabric
// allows; libfabric's own util AV does the same. The top RxCtxBits bits of
// an fi_addr are reserved for the receive context index (fi_rx_addr) and
// ignored by Lookup.
//
// Address validation and printing come from the provider's
// provider.AddrHandler; without one any non-empty byte string is valid and
// printed in hex. Duplicate insertions are not detected (fi_av(3) leaves
// them undefined): each gets its own index, and Reverse reports the most
// recent live one.
//
// An AV is safe for concurrent use; Lookup and Reverse take a read lock and
// do not allocate.
package av
