package main

import (
	"sync"
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// The reverse of the handle table: the C fid of a Go API object. Events and
// completions name objects the Go way (EQEntry.FID is the *fabric.Endpoint,
// *fabric.PassiveEndpoint, *fabric.AV or *fabric.MR an event is about;
// Info.Handle of a FI_CONNREQ is the Go connection request); the C entries
// carry the struct fid * that C knows the object by.
//
// Every wrapper that hands a Go API object to C records it with setFID when
// its C struct is allocated and clears it with delFID before freeing it.
// The map is read only on control paths (EQ reads, CM), never per message.
var fidMap sync.Map // Go API object (pointer) -> unsafe.Pointer (its struct fid *)

// setFID records that Go object obj is known to C as fid.
func setFID(obj any, fid unsafe.Pointer) { fidMap.Store(obj, fid) }

// delFID forgets obj (before its C struct is freed).
func delFID(obj any) { fidMap.Delete(obj) }

// fidOf returns the C fid of Go object obj, or nil when C does not know it.
func fidOf(obj any) unsafe.Pointer {
	if obj == nil {
		return nil
	}
	v, ok := fidMap.Load(obj)
	if !ok {
		return nil
	}
	return v.(unsafe.Pointer)
}

// bindTarget is implemented by the wrapper of every object an endpoint,
// MR, passive endpoint or domain can be bound to through fi_*_bind (CQ,
// counter, EQ, AV, SRX, STX, MR): it returns the Go API object for
// fabric's Bind methods. The bind entry points resolve the C bfid with
// gofab_fid_handle + handles.get and assert this interface.
type bindTarget interface {
	bindTarget() fabric.Bindable
}
