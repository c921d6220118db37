package markdown

import "testing"

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                           "plain",
		"a|b":                             `a\|b`,
		"iperf3: error\nconnect: refused": "iperf3: error connect: refused",
		"crlf\r\nline":                    "crlf line",
		"</td></tr><script>x</script>":    "&lt;/td>&lt;/tr>&lt;script>x&lt;/script>",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

// Free text renders as written: what would open an HTML tag or an
// autolink, or start an entity, is escaped; a '<' or '&' that would not
// is left readable.
func TestText(t *testing.T) {
	for in, want := range map[string]string{
		`evil <script>alert("d")</script>`: `evil &lt;script>alert("d")&lt;/script>`,
		"read <stdin>: EOF":                "read &lt;stdin>: EOF",
		"<!-- c --> <?x?> <http://a>":      "&lt;!-- c --> &lt;?x?> &lt;http://a>",
		"&lt; and &#60;":                   "&amp;lt; and &amp;#60;",
		"p <0.001, a & b, x > y, x<3":      "p <0.001, a & b, x > y, x<3",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
