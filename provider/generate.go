package provider

// The String methods of the enumerations (stringer, from each constant's
// line comment) and the bit-flag and error-text tables (genfi, likewise from
// line comments) are generated; scripts/test.sh checks they are up to date.
// To add a name, give the constant a line comment with libfabric's spelling
// and run `go generate ./provider`; a new enumeration type also goes in the
// stringer -type list, a new bit-flag type in genfi's -bits list.

//go:generate go run ../internal/cmd/genfi -bits=Caps,Flags,Mode,Order,MRMode -errno=Errno -output=names_gen.go
//go:generate go tool -modfile=../tools.mod stringer -linecomment -output=enum_string.go -type=EPType,AddrFormat,Protocol,Progress,Threading,ResourceMgmt,AVType,WaitObj,CQFormat,CQWaitCond,EventType,AtomicOp,Datatype
