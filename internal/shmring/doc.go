// Package shmring holds the shared-memory data structures of the shm
// provider, laid over a []byte that is a MAP_SHARED mapping of a region
// file: the region header, the inbound command queue and the bounce-buffer
// pool. Nothing here knows about endpoints or the provider's protocol
// beyond the command layout (Cmd).
//
// Everything read from a region is untrusted: another process (of the same
// user) may write anything into it at any time. Header values are copied
// and validated once, at Attach, and never read again; indices and lengths
// read from the ring, the pool and commands are bounds-checked before use.
// A damaged region makes an operation fail (or a command be dropped), never
// a panic or an access outside the mapping (FuzzAttach, FuzzDecode,
// FuzzRing drive these paths with arbitrary bytes).
//
// # Region layout (version 2, little-endian)
//
//	0      header page (HeaderSize bytes)
//	         0  magic "GOFABSHM"
//	         8  version u32, header size u32
//	        16  total size u64
//	        24  ring offset u64, 32 ring slots u32, 36 slot size u32
//	        40  pool offset u64, 48 buffer count u32, 52 buffer size u32
//	        56  buffer area offset u64
//	        64  owner pid u32, 68 auth-key length u32, 72 owner id u64
//	        80  auth key (up to MaxAuthKey bytes)
//	       256  closing u32 (owner is shutting down)
//	       320  wake word seq u32, 324 sleepers u32 (futex protocol)
//	       384  ring tail u64 (producers)
//	       448  free-list head u64 (change counter << 32 | top index+1)
//	       512  consumer position u64 (the owner, for producers)
//	ringOff  RingSlots slots of SlotSize bytes: an MPSC queue: each slot
//	         starts with its sequence number u64, then a command
//	poolOff  BufCount cells of 8 bytes (index+1 of the next free buffer):
//	         the free list of the bounce buffers, a lock-free stack (MPMC)
//	bufOff   BufCount bounce buffers of BufSize bytes
//
// The command queue: producers (any process that has the region mapped)
// claim a position by a compare-and-swap on the tail after checking that
// it is less than the consumer position plus the number of slots (the
// slot of the position a lap before has been released), write the
// command into its slot, then publish it by storing position+1 into the
// slot's sequence number. The single consumer (the owner) reads the slot
// at its private head when the sequence number says it is published, and
// releases it by storing head+1 into the consumer position word.
// Producers keep the consumer position they last read and read the word
// again only when that says full (version 1 freed each slot by writing
// its sequence number, which made every slot line travel back to the
// producer: one cache miss more per command). The bounce buffers' free list is a stack (the most
// recently returned buffer, still in the caches, is taken first) with a
// change counter in its head word against ABA; senders take buffers, the
// owner returns them (a sender returns one it did not use).
//
// Words shared between processes are accessed only through sync/atomic
// (words_unsafe.go derives their pointers from bounds-checked slices);
// payload bytes are plain copies ordered by those atomics.
package shmring
