package sysmem

import "testing"

// TestAvailable checks that some source gives a plausible amount: at least the 64 MiB any
// machine running the tests has, and the source named.
func TestAvailable(t *testing.T) {
	n, source := Available()
	if n < 64<<20 || source == "" {
		t.Fatalf("Available() = %d, %q", n, source)
	}
}
