package sim

import "github.com/gofabric/fabric/internal/wire/simwire"

// The cross-process wire codec, for the external tests that play
// another process (xproc_hostile_test.go), which may not import an
// internal package themselves.
type (
	WireMessage     = simwire.Message
	WireRMAIOV      = simwire.RMAIOV
	WireFragHeader  = simwire.FragHeader
	WireReassembler = simwire.Reassembler
)

var (
	WireAppendMessage = simwire.AppendMessage
	WireParseMessage  = simwire.ParseMessage
	WireAppendFrags   = simwire.AppendFrags
	WireAppendFrag    = simwire.AppendFrag
)

const (
	WireFlagAtomic   = simwire.FlagAtomic
	WireFlagFetch    = simwire.FlagFetch
	WireFlagRead     = simwire.FlagRead
	WireFlagReliable = simwire.FlagReliable
	WireKindAck      = simwire.KindAck
	WireKindAnswer   = simwire.KindAnswer
	WireKindRMA      = simwire.KindRMA
	WireMaxChunk     = simwire.MaxChunk
	WireMaxDatagram  = simwire.MaxDatagram
	WireMaxRMA       = simwire.MaxRMA
)

// SockName is the socket name of endpoint id of a cross-process network.
func SockName(network string, id uint64) string { return sockName(network, id) }
