// Package all registers every provider of the module; the command-line
// tools import it.
//
//	import _ "github.com/gofabric/fabric/prov/all"
package all

import (
	_ "github.com/gofabric/fabric/prov/chaos" // hook "chaos" (FI_HOOK=chaos): fault injection and tracing over any provider
	_ "github.com/gofabric/fabric/prov/lnx"   // "lnx": FI_EP_RDM over shm for local peers and tcp for remote ones (fi_peer(3))
	_ "github.com/gofabric/fabric/prov/shm"   // "shm": FI_EP_RDM between processes of one host through shared memory
	_ "github.com/gofabric/fabric/prov/sim"   // "sim": FI_EP_RDM and FI_EP_DGRAM on a deterministic simulated fabric with virtual time
	_ "github.com/gofabric/fabric/prov/tcp"   // "tcp": FI_EP_MSG over TCP, wire-compatible with libfabric 1.17
	_ "github.com/gofabric/fabric/prov/udp"   // "udp": FI_EP_DGRAM over UDP sockets
)
