package collect

import (
	"strings"
	"testing"
)

// The local engine's perf samples every CPU of the machine both emulated
// nodes share: the description said "on the server node", true of a
// cluster node's agent alone.
func TestCPPDescriptionSaysWhichCPUs(t *testing.T) {
	d := cppEntry.Description
	for _, want := range []string{"every CPU", "local engine", "both emulated nodes", "server node's agent"} {
		if !strings.Contains(d, want) {
			t.Errorf("cpp description %q does not say %q", d, want)
		}
	}
}
