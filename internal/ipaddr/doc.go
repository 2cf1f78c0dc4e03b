// Package ipaddr is the one codec for libfabric's socket addresses
// (FI_SOCKADDR_IN / FI_SOCKADDR_IN6: the kernel's sockaddr_in/in6 bytes on
// little-endian Linux), their fi_av_straddr strings, and the address
// resolution the IP providers (udp, tcp) share: node/service to sockaddr,
// interface addresses to fi_info fabric/domain names.
package ipaddr
