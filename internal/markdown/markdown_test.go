package markdown

import "testing"

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                           "plain",
		"a|b":                             `a\|b`,
		"iperf3: error\nconnect: refused": "iperf3: error connect: refused",
		"crlf\r\nline":                    "crlf line",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}
