package main

// alphabet is the data-integrity alphabet of fi_pingpong -c.
const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// integSeed is the per-message rotation of the pattern.
const integSeed = 7

// alphabet2 is the alphabet twice, so that any run of up to 62 bytes
// starting anywhere in the alphabet is one contiguous slice.
const alphabet2 = alphabet + alphabet

// pattern generates or checks fi_pingpong's payload: message number k of a
// process (counted separately for sends and receives, across all sizes)
// has byte i = alphabet[(7*k + i) mod 62]. The counter is 32-bit unsigned
// like the C tool's.
type pattern struct {
	k uint32 // messages generated or checked so far
}

// start returns the alphabet index of message k's first byte and advances.
func (p *pattern) next() int {
	idx := int((p.k * integSeed) % uint32(len(alphabet)))
	p.k++
	return idx
}

// fill writes the next message's pattern into buf.
func (p *pattern) fill(buf []byte) {
	idx := p.next()
	for len(buf) > 0 {
		n := copy(buf, alphabet2[idx:idx+len(alphabet)])
		buf = buf[n:]
	}
}

// check verifies buf against the next message's pattern. It returns the
// index of the first wrong byte, or -1 when buf is intact.
func (p *pattern) check(buf []byte) int {
	idx := p.next()
	off := 0
	for off < len(buf) {
		want := alphabet2[idx : idx+len(alphabet)]
		chunk := buf[off:]
		if len(chunk) > len(want) {
			chunk = chunk[:len(want)]
		}
		if string(chunk) != want[:len(chunk)] {
			for i := range chunk {
				if chunk[i] != want[i] {
					return off + i
				}
			}
		}
		off += len(chunk)
	}
	return -1
}
