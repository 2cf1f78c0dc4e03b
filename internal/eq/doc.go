// Package eq is the event queue machinery (fi_eq(3)) behind fabric.EQ: a
// bounded FIFO of events in which error events keep their place, FI_PEEK,
// overrun, err_data ownership rules, application-written events
// (fi_eq_write), blocking reads and the wait objects (via package
// progress).
//
// An *EQ implements provider.EQWriter: providers report connection
// management and asynchronous events with Write and WriteErr.
//
// Read semantics: events are returned oldest first, one per read; EAVAIL
// when an error event is at the head (ReadErr returns it); an empty EQ
// drives progress of the bound sources and then returns EAGAIN; after an
// overrun, writes fail with EOVERRUN and reads return the queued events and
// then EOVERRUN for good (fi_eq(3) NOTES).
package eq
