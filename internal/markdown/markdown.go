// Package markdown holds what the Markdown pages (summary.md, compare's
// table, advice.md) share about writing GitHub-flavoured Markdown.
package markdown

import (
	"regexp"
	"strings"
)

// cellReplacer escapes the two things that break a table row: a pipe
// ends the cell, a newline ends the row (a failed trial's error can be
// a tool's multi-line stderr).
var cellReplacer = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// Cell is s as one cell of a table row, rendered as s (Text).
func Cell(s string) string { return cellReplacer.Replace(Text(s)) }

var (
	// entityStart is a '&' a renderer would read as an entity's start
	// ("&lt;", "&#60;"); tagStart a '<' it would read as raw HTML or an
	// autolink: a letter, '/', '!' or '?' after it.
	entityStart = regexp.MustCompile(`&([A-Za-z#])`)
	tagStart    = regexp.MustCompile(`<([A-Za-z/!?])`)
)

// Text is free text (a study's description or reference note, a
// warning, an error a tool printed) as Markdown that renders as the text:
// a '<' that would open an HTML tag is written "&lt;" (a study's
// `<script>` ran in a rendered summary.md; an error's "<stdin>"
// vanished), a '&' that would start an entity "&amp;". Only those are
// escaped, so the file stays readable as text: "p <0.001", "a & b" and
// "x > y" are left as they are, which render as written.
func Text(s string) string {
	s = entityStart.ReplaceAllString(s, "&amp;$1")
	return tagStart.ReplaceAllString(s, "&lt;$1")
}
