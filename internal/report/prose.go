package report

import (
	"html/template"
	"regexp"
	"strings"
)

// codeSpan is a command quoted in backticks, as this tool's messages
// quote one ("`cnibench run --resume` on this directory"): a Markdown
// code span, which summary.md renders as code.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// prose is a message (a warning, a note the run recorded) for
// report.html: escaped, with its backtick-quoted commands in <code> as
// summary.md shows them; the page printed the backticks.
func prose(s string) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range codeSpan.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(template.HTMLEscapeString(s[last:m[0]]))
		b.WriteString("<code>" + template.HTMLEscapeString(s[m[2]:m[3]]) + "</code>")
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(s[last:]))
	return template.HTML(b.String()) // every part of s is escaped above
}
