package catalog

import (
	"os"
	"strings"
	"testing"
)

// TestDocumented: adding a datapath is its package, one line in All() and
// a row in the table of docs/datapaths.md (or datapaths-advanced.md for
// the ones with daemons of their own); a datapath users cannot read about
// fails here.
func TestDocumented(t *testing.T) {
	var text string
	for _, f := range []string{"datapaths.md", "datapaths-advanced.md"} {
		b, err := os.ReadFile("../../../docs/" + f)
		if err != nil {
			t.Fatal(err)
		}
		text += string(b)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		// A row's first cell names one or more datapaths: | `a`, `b` (x) |
		cell := strings.SplitN(line, "|", 3)[1]
		for _, part := range strings.Split(cell, "`") {
			rows[strings.TrimSpace(part)] = true
		}
	}
	for _, name := range Names() {
		if !rows[name] {
			t.Errorf("datapath %s has no row in docs/datapaths.md or datapaths-advanced.md", name)
		}
	}
}
