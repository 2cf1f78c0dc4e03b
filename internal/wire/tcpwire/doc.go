// Package tcpwire is the codec of libfabric 1.17's tcp provider ("tcpx",
// FI_EP_MSG) wire format, byte for byte (libfabric-1.17-wire.md §4):
//
//   - the connection-management (CM) message exchanged right after the TCP
//     connection is made: a 32-byte header (version 3, type connect
//     request 0 / connect response 1 / reject 6, cm data length as a
//     big-endian u16, an endianness probe) followed by 0..256 bytes of
//     connection data (AppendCM, ParseCMHeader, ParseCM);
//   - the data frames that follow on the stream: a 16-byte base header
//     (version 3, op, flags, op_data, rma_iov_cnt, hdr_size, id, size) then
//     the optional 8-byte words the flags and op call for (cq_data, tag,
//     rma_iov[]), then size-hdr_size bytes of payload (PutHeader,
//     AppendHeader, ParseHeader, PeekHeaderSize).
//
// All multi-byte fields of the data header are little-endian, except when
// the peer's CM endianness probe showed the opposite byte order: then the
// receiver swaps flags, size and every 8-byte word after the base header
// on both directions, which the swap arguments select.
//
// Parsers never panic and never read outside the slices they are given;
// every length is checked against the limits of the format (hdr_size 16 to
// 120, at most 4 RMA iovs, cm data at most 256 bytes). Encoders write into
// caller memory and do not allocate.
package tcpwire
