package report

import (
	"strings"
	"testing"
)

// A cell's pipe or newline (a failed trial's multi-line error in the
// repetitions table) stays inside its row of summary.md.
func TestTableMarkdownKeepsRows(t *testing.T) {
	var b strings.Builder
	table{Head: []string{"cell", "why"}, Rows: [][]string{{"a|b", "not measured: iperf3: error\nunable to connect"}}}.markdown(&b)
	want := "| cell | why |\n|---|---|\n| a\\|b | not measured: iperf3: error unable to connect |\n\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
