// Package stx is the provider side of a shared transmit context
// (fi_stx_context in fi_endpoint(3)): the attributes a provider grants one,
// checked against the provider's limits. Every provider of this module
// opens its shared transmit contexts through Open.
//
// A shared transmit context is a transmit queue that several endpoints of
// one domain use. Operations are still posted to, and completed through,
// each endpoint (its CQs and counters, its address); the context fixes the
// attributes those endpoints may use (theirs must be a subset of its own,
// which the root package checks when an endpoint binds it).
package stx

import (
	"sync/atomic"

	"github.com/gofabric/fabric/provider"
)

// Limits are the most a provider's shared transmit context can grant.
type Limits struct {
	Caps        provider.Caps // transmit capabilities the provider has
	MsgOrder    provider.Order
	InjectSize  uint64
	Size        uint64
	IOVLimit    uint64
	RMAIOVLimit uint64
}

// Context is a provider's shared transmit context.
type Context struct {
	attr   provider.TxAttr
	closed atomic.Bool
}

// Open checks attr against lim and returns a context holding attr. attr
// must not be nil (the root fills the domain's defaults). A capability,
// ordering bit, inject size, queue size or iov limit beyond lim is
// EINVAL; a zero Size, IOVLimit or RMAIOVLimit takes lim's value.
func Open(attr *provider.TxAttr, lim Limits) (*Context, error) {
	if attr == nil {
		return nil, provider.EINVAL
	}
	a := *attr
	if a.Size == 0 {
		a.Size = lim.Size
	}
	if a.IOVLimit == 0 {
		a.IOVLimit = lim.IOVLimit
	}
	if a.RMAIOVLimit == 0 {
		a.RMAIOVLimit = lim.RMAIOVLimit
	}
	switch {
	case a.Caps&^lim.Caps != 0,
		a.MsgOrder&^lim.MsgOrder != 0,
		a.InjectSize > lim.InjectSize,
		a.Size > lim.Size,
		a.IOVLimit > lim.IOVLimit,
		a.RMAIOVLimit > lim.RMAIOVLimit:
		return nil, provider.EINVAL
	}
	return &Context{attr: a}, nil
}

// Attr returns the attributes the context was granted.
func (c *Context) Attr() provider.TxAttr { return c.attr }

// Close closes the context; a second Close is EINVAL (the root answers
// ErrClosed before it gets here).
func (c *Context) Close() error {
	if c.closed.Swap(true) {
		return provider.EINVAL
	}
	return nil
}

// Credits is the queue of a shared transmit context as a pool of credits
// (provider.TxCredits), shared by the endpoints bound to the context
// without a lock: Take and Give are one atomic operation each when the
// pool is not contended.
type Credits struct {
	size int64
	used atomic.Int64
}

var _ provider.TxCredits = (*Credits)(nil)

// NewCredits returns a pool of size credits (at least 1).
func NewCredits(size uint64) *Credits {
	return &Credits{size: int64(max(min(size, 1<<62), 1))}
}

// Take implements provider.TxCredits.
func (c *Credits) Take() bool {
	for {
		n := c.used.Load()
		if n >= c.size {
			return false
		}
		if c.used.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Give implements provider.TxCredits.
func (c *Credits) Give() { c.used.Add(-1) }

// Used returns the credits taken and not given back (negative if more
// were given back than taken: a provider's bug, which tests look for).
func (c *Credits) Used() int64 { return c.used.Load() }

// Size returns the number of credits.
func (c *Credits) Size() int64 { return c.size }
