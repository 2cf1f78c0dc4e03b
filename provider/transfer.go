package provider

// ---- fi_peer(3) FI_PEER_TRANSFER (re-exported by package peer) ----

// TransferPeer is fi_ops_transfer_peer: how the main provider reports the
// completion of transfers a peer provider initiated over the main
// provider's endpoint. ep is that endpoint (the root package passes its
// *fabric.Endpoint); e.OpContext is the peer's context (TransferOp.Context).
type TransferPeer interface {
	Complete(ep any, e *CQEntry, src Addr) error
	CompErr(ep any, e *CQErrEntry) error
}

// TransferOp is the operation context that marks a transfer a peer
// provider posts on the main provider's endpoint (FI_PEER_TRANSFER): its
// completion goes to the TransferPeer linked to that endpoint, with
// Context as the completion's context, instead of the endpoint's CQ.
type TransferOp struct {
	Context any
}

// TransferContext is fi_peer_transfer_context.
type TransferContext struct {
	// Info describes the main provider's objects (optional): a peer that
	// cannot meet its restrictions fails the open.
	Info *Info
	// EP is the main provider's endpoint over which the peer transfers
	// (the root package's *fabric.Endpoint).
	EP any
	// Peer is the peer's callbacks; the peer sets it before its
	// TransferDomain.TransferEndpoint returns.
	Peer TransferPeer
}

// TransferDomain is implemented by the domains of a provider that asks
// for FI_PEER_TRANSFER (Info.Mode): TransferEndpoint opens an endpoint
// linked to the main provider's endpoint ctx.EP, setting ctx.Peer.
// Domains without it cannot be opened that way (EINVAL).
type TransferDomain interface {
	TransferEndpoint(info *Info, ctx *TransferContext) (Endpoint, error)
}
