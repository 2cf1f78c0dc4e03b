package main

// maxDataMsg is the buffer size fi_pingpong uses without -S: 4 MiB + 2 MiB,
// capped by the provider's max_msg_size.
const maxDataMsg = 1<<22 + 1<<21

// defaultSizes is the size list used without -S.
var defaultSizes = []int{64, 256, 1024, 4096, 65536, 1048576}

// sizeMode says which size list to run.
type sizeMode int

const (
	sizesDefault sizeMode = iota // the default list
	sizesAll                     // -S all
	sizesOne                     // -S n
)

// bufSize is the transfer buffer size: the -S size, or maxDataMsg, capped
// by the provider's max_msg_size (fi_pingpong's tx_size and rx_size).
func bufSize(mode sizeMode, size int, maxMsg uint64) int {
	n := uint64(maxDataMsg)
	if mode == sizesOne {
		n = uint64(size)
	}
	if n > maxMsg {
		n = maxMsg
	}
	return int(n)
}

// testSizes returns the sizes to run, as fi_pingpong generates them for a
// buffer of txSize bytes: -S n gives n (none if n > txSize); the default
// list stops at the first size above txSize; "all" is 0, 1, then 2^i and
// 1.5*2^i for i >= 1, stopping at the first value above txSize.
func testSizes(mode sizeMode, size, txSize int) []int {
	var out []int
	switch mode {
	case sizesOne:
		if size <= txSize {
			out = append(out, size)
		}
	case sizesDefault:
		for _, s := range defaultSizes {
			if s > txSize {
				break
			}
			out = append(out, s)
		}
	case sizesAll:
		for i := 0; i < 62; i++ {
			pow, half := 0, 1
			if i > 0 {
				pow = 1 << i
				half = pow + pow/2
			}
			if pow > txSize {
				break
			}
			out = append(out, pow)
			if half > txSize {
				break
			}
			out = append(out, half)
		}
	}
	return out
}
