package offload

import (
	"strings"
	"testing"
)

// Captured from ethtool 6.1 on this machine (see kernel_test.go).
func TestExplain(t *testing.T) {
	cases := map[string]string{
		"netlink error: bit name not found (offset 52)\nnetlink error: Operation not supported\n": "not a feature ethtool knows",
		"Could not change any device features\n":                                                  "fixed on this device",
		"":                                                                                        "without a message",
		"netlink error: no device matches name (offset 24)\nnetlink error: No such device\n": "netlink error: no device matches name (offset 24) netlink error: No such device",
	}
	for in, want := range cases {
		if got := Explain([]byte(in), []byte("Actual changes:\nhw-tc-offload: off [requested on]\n")[:0]); !strings.Contains(got, want) {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func FuzzExplain(f *testing.F) {
	f.Add([]byte("Could not change any device features\n"), []byte("Actual changes:\nhw-tc-offload: off [requested on]\n"))
	f.Add([]byte("netlink error: bit name not found (offset 52)\n"), []byte(nil))
	f.Fuzz(func(t *testing.T, stderr, stdout []byte) {
		if got := Explain(stderr, stdout); strings.Contains(got, "\n") || got == "" {
			t.Errorf("Explain(%q, %q) = %q: want one non-empty line", stderr, stdout, got)
		}
	})
}
