// Package hints implements the provider-independent half of fi_getinfo(3):
// the rules by which a provider's fi_info is matched against an
// application's hints and then adjusted to them, the FI_PROVIDER filter,
// and fi_tostr(3)'s rendering of an fi_info as `fi_info -v` prints it.
//
// The rules follow libfabric 1.17's util layer (ofi_check_info and
// ofi_alter_info in prov/util/src/util_attr.c), which every C provider
// built on the util layer applies, so that every Go provider gets the same
// matching whatever it returns from its own GetInfo:
//
//   - Check (ofi_check_info) decides whether one provider Info satisfies the
//     hints: every non-zero hint must be supported, zero hints are
//     wildcards, except mode bits, where zero means the application
//     supports no mode.
//   - Alter (ofi_alter_info) narrows a matching Info to the hints: primary
//     capabilities become exactly the requested ones (plus the direction
//     modifiers FI_SEND/FI_RECV, FI_READ/FI_WRITE/FI_REMOTE_* the provider
//     offers when none were requested), secondary capabilities stay,
//     threading/progress/av_type and queue sizes echo the hints, mr_mode is
//     reduced to the requested bits.
//
// One deliberate difference from C: a nil attribute structure in the hints
// (a Go caller's `&Info{Caps: ...}` with DomainAttr nil) places no
// constraint on that structure and leaves the provider's values unchanged,
// where C, which always allocates them, would treat them as zero.
package hints
