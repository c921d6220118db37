// Package markdown holds what the Markdown pages (summary.md, compare's
// table, advice.md) share about writing GitHub-flavoured Markdown.
package markdown

import "strings"

// cellReplacer escapes the two things that break a table row: a pipe
// ends the cell, a newline ends the row (a failed trial's error can be
// a tool's multi-line stderr).
var cellReplacer = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// Cell is s as one cell of a table row.
func Cell(s string) string { return cellReplacer.Replace(s) }
