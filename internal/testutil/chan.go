package testutil

// Kicked reports whether k holds a value, taking it if so; it never blocks.
func Kicked(k <-chan struct{}) bool {
	select {
	case <-k:
		return true
	default:
		return false
	}
}
