package markdown

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                           "plain",
		"a|b":                             `a\|b`,
		"iperf3: error\nconnect: refused": "iperf3: error connect: refused",
		"crlf\r\nline":                    "crlf line",
		"</td></tr><script>x</script>":    "&lt;/td>&lt;/tr>&lt;script>x&lt;/script>",
		// Inline syntax is escaped as in Text; a line start is not (a
		// table cell holds inline content only).
		"- [x](javascript:y) *z*": `- [x\](javascript:y) \*z\*`,
		"1.234 [1.10, 1.30]":      "1.234 [1.10, 1.30]",
		"`a|b`":                   "`a\\|b`",
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

// Free text starts no block and makes no link, emphasis or line break:
// a study's description with a "---" line and a list, a source with a
// javascript: link and an e-mail autolink, render as the text. What
// renders as written anyway (intervals, names with '_', a '#' inside a
// word) is left readable.
func TestTextSyntax(t *testing.T) {
	for in, want := range map[string]string{
		"Steering on VXLAN\n---\n- see *all* results": `Steering on VXLAN --- - see \*all\* results`,
		"seed [000](javascript:alert(1)) and <1@x.y>": `seed [000\](javascript:alert(1)) and &lt;1@x.y>`,
		"# h":                `\# h`,
		"> [!NOTE] q":        `\> [!NOTE] q`,
		"- x":                `\- x`,
		"---":                `\---`,
		"+ x":                `\+ x`,
		"=== x":              `\=== x`,
		"1. x":               `1\. x`,
		"2026) x":            `2026\) x`,
		"    code":           "code",
		"[a]: http://x":      `\[a]: http://x`,
		"[a][b] ![i](x.png)": `\[a\][b] ![i\](x.png)`,
		"group #":            `group \#`,
		"C# and F#, -0.5, 1.5 Gbit/s, [0.71, 0.85]": "C# and F#, -0.5, 1.5 Gbit/s, [0.71, 0.85]",
		"_em_ __b__ x*y*z ~~s~~ $m$":                `\_em\_ \_\_b\_\_ x\*y\*z \~\~s\~\~ \$m\$`,
		"transactions_per_s é_x_é":                  "transactions_per_s é_x_é",
		`C:\dir\*x`:                                 `C:\\dir\\\*x`,
		"a  \r\nb":                                  "a   b",
		"`cnibench run --resume` on this `*dir*`":   "`cnibench run --resume` on this `*dir*`",
		"``a ` b`` and `open":                       "``a ` b`` and \\`open",
		"```fence":                                  "\\`\\`\\`fence",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// blockStart is what would start a block at a line's start in
// CommonMark or GFM (besides a paragraph; a table needs a second line).
var blockStart = regexp.MustCompile("^(?:[ \t]|#|>|[-+*][ \t]|[-=_*]{2,}|[0-9]{1,9}[.)]|```[^`]*$|~~~|<[A-Za-z/!?]|\\[)")

// opener is the first character of got, outside its code spans and not
// backslash-escaped, that would open inline syntax: emphasis,
// strikethrough, math, a link's closing "](" or "][", raw HTML or an
// autolink, an entity other than the "&lt;" and "&amp;" Text writes; ""
// if none.
func opener(got string) string {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(got); i++ {
		rest := got[i:]
		before, _ := utf8.DecodeLastRuneInString(got[:i])
		after, _ := utf8.DecodeRuneInString(rest[min(1, len(rest)):])
		switch c := got[i]; {
		case c == '\\':
			i++ // the escaped character
		case c == '`':
			// A code span: this run of backticks to the next run of as
			// many; nothing in it is parsed.
			n := len(rest) - len(strings.TrimLeft(rest, "`"))
			closer := regexp.MustCompile("(?:^|[^`])(" + rest[:n] + ")(?:[^`]|$)").FindStringSubmatchIndex(rest[n:])
			if closer != nil {
				i += n + closer[3] - 1
			} else {
				i += n - 1
			}
		case strings.HasPrefix(rest, "&lt;"), strings.HasPrefix(rest, "&amp;"):
		case strings.ContainsRune("*~$", rune(c)), c == '_' && !(word(before) && word(after)),
			strings.HasPrefix(rest, "]("), strings.HasPrefix(rest, "]["),
			regexp.MustCompile(`^(?:<[A-Za-z/!?]|&[A-Za-z#])`).MatchString(rest):
			return rest
		}
	}
	return ""
}

// Whatever the text, Text's result is one line that starts no block, as
// a paragraph, a heading's text or a list item's, and opens no inline
// syntax outside its code spans.
func TestTextStartsNothing(t *testing.T) {
	hostile := []string{
		"Steering on VXLAN\n---\n- see *all* results",
		"seed [000](javascript:alert(1)) and <1@x.y>",
		"  # h", "\t- x", "***", "___", "```\ncode\n```", "```\ncode", "~~~", "<div>", "1) x", "[^1]: note",
		"x\n    indented", "a\\\nb", "<a href='x'>y</a>", "&amp; **b** _i_ ~s~ $m$ [l](u) [r][1]", "a_*b*_c",
	}
	// The checker itself.
	for got, want := range map[string]string{"`*` *x": "*x", `\*`: "", "``a`*`` _": "_", "é_x_é": "", "`open *": "*", "a &lt;b": ""} {
		if o := opener(got); o != want {
			t.Fatalf("opener(%q) = %q, want %q", got, o, want)
		}
	}
	for _, in := range hostile {
		got := Text(in)
		if strings.ContainsAny(got, "\r\n") {
			t.Errorf("Text(%q) = %q: more than one line", in, got)
		}
		if blockStart.MatchString(got) {
			t.Errorf("Text(%q) = %q starts a block", in, got)
		}
		if o := opener(got); o != "" {
			t.Errorf("Text(%q) = %q: %q opens inline syntax", in, got, o)
		}
	}
}

// A name in a code span stays one span, whatever backticks it holds.
func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"baseline":    "`baseline`",
		"*base`x*":    "``*base`x*``",
		"`a``":        "``` `a`` ```",
		"a\nb <c> &d": "`a b <c> &d`",
	} {
		if got := Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
	}
}
