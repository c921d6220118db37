// Package markdown holds what the Markdown pages (summary.md, compare's
// table, advice.md) share about writing GitHub-flavoured Markdown.
package markdown

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Cell is s as one cell of a table row: its inline text rendered as
// written (as Text, without Text's line-start escapes: a GFM table cell
// holds inline content only, so "- " or "1. " there starts nothing),
// with a pipe escaped, since a pipe ends the cell (GFM unescapes it
// before parsing the cell, inside a code span too).
func Cell(s string) string { return strings.ReplaceAll(inline(s), "|", `\|`) }

// Text is free text (a study's description, source or reference note,
// a group's name, a warning, an error a tool printed) as Markdown that
// renders as the text, in a paragraph, a heading or a list item: a
// study.yaml is anyone's, and a renderer may pass raw HTML and links
// through (a study's `<script>` ran in a rendered summary.md; a source
// "seed [000](javascript:...)" was a link).
//
// Line breaks are folded to spaces, as in Cell: no line of the text can
// start a block of its own (a description's "---" line made a heading of
// the line above it, "- x" a list). Then only what could start syntax is
// escaped, not every ASCII punctuation character CommonMark lets one
// escape: summary.md is read as text too, and intervals ("[0.71,
// 0.85]"), ratios, "p <0.001", "a & b", "x > y" and metric names
// (transactions_per_s) stay as written where they render as written.
// Escaped (inline): every '\', '*', '~' (GFM strikethrough) and '$'
// (GitHub's math); a '_' unless between two letters or digits, where it
// can neither open nor close emphasis; a ']' directly before '(' or '['
// (it would close a link's text: nothing before it can then be a link,
// and a shortcut "[x]" needs a definition, which only a line's start
// can give); a '<' that would open an HTML tag, an autolink or an email
// autolink ("&lt;"); a '&' that would start an entity ("&amp;").
// Escaped at the start (inline's line starts: a paragraph's, a list
// item's, a heading's): leading blanks (four make a code block), a '#',
// '>', '=', '[' or '+', a '-' list marker or rule, an ordered list's
// "1." or "1)"; and a heading's closing "#" sequence at the end.
//
// A code span (`cnibench run --resume`) is kept as written: nothing in
// it is parsed, so it is safe, and backticks around a command are how
// this tool's own messages quote one. A backtick without its closing
// run is escaped. Bare URLs and e-mail addresses may still become links
// in GFM (its extended autolinks): their text is as written, and only
// http(s) and mailto are linked so.
func Text(s string) string {
	s = strings.TrimLeft(inline(s), " \t")
	s = closingHashes.ReplaceAllString(s, `$1\#$2`)
	switch {
	case s == "":
		return s
	case strings.ContainsRune("#>=[+", rune(s[0])), s[0] == '-' && (len(s) == 1 || strings.ContainsRune(" \t-", rune(s[1]))):
		return `\` + s
	}
	if m := orderedItem.FindStringSubmatchIndex(s); m != nil {
		return s[:m[3]] + `\` + s[m[3]:]
	}
	return s
}

var (
	// orderedItem is an ordered list item's start: up to nine digits and
	// a '.' or ')' (group 1's end is where the escape goes) before a
	// blank or the end.
	orderedItem = regexp.MustCompile(`^[0-9]{1,9}()[.)]([ \t]|$)`)
	// closingHashes is an ATX heading's optional closing sequence: a
	// blank, then '#'s to the end.
	closingHashes = regexp.MustCompile(`([ \t])#(#*[ \t]*)$`)
	// entityStart is a '&' a renderer would read as an entity's start
	// ("&lt;", "&#60;"); tagStart a '<' it would read as raw HTML or an
	// autolink: a letter, '/', '!' or '?' after it; emailAutolink a '<'
	// before an e-mail autolink ("<1@x.y>": CommonMark's local part may
	// start with a digit or a punctuation character).
	entityStart   = regexp.MustCompile(`^&[A-Za-z#]`)
	tagStart      = regexp.MustCompile(`^<[A-Za-z/!?]`)
	emailAutolink = regexp.MustCompile(`^<[^\s<>@]+@[^\s<>]*>`)
	lineBreaks    = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
)

// inline is s on one line with its inline syntax escaped (Text says
// what and why); code spans are copied as written.
func inline(s string) string {
	s = lineBreaks.Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			n := run(s, i)
			if end := closingRun(s, i+n, n); end >= 0 {
				b.WriteString(s[i:end])
				i = end
				continue
			}
			b.WriteString(strings.Repeat("\\`", n))
			i += n
			continue
		case c == '\\', c == '*', c == '~', c == '$':
			b.WriteByte('\\')
		case c == '_' && !(wordAt(s, i, -1) && wordAt(s, i, +1)):
			b.WriteByte('\\')
		case c == ']' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '['):
			b.WriteByte('\\')
		case c == '<' && (tagStart.MatchString(s[i:]) || emailAutolink.MatchString(s[i:])):
			b.WriteString("&lt;")
			i++
			continue
		case c == '&' && entityStart.MatchString(s[i:]):
			b.WriteString("&amp;")
			i++
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// run is the length of the backtick run at s[i].
func run(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingRun is the end of the first run of exactly n backticks from
// s[from] (what closes a code span opened by n), -1 if none.
func closingRun(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s, i)
		if m == n {
			return i + m
		}
		i += m
	}
	return -1
}

// wordAt reports whether the rune beside s[i] (dir -1 before, +1 after)
// is a letter or digit: a '_' between two of them is inside a word.
func wordAt(s string, i, dir int) bool {
	var r rune
	if dir < 0 {
		r, _ = utf8.DecodeLastRuneInString(s[:i])
	} else {
		r, _ = utf8.DecodeRuneInString(s[i+1:])
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Code is s as a code span, rendered as written whatever it holds: on
// one line, fenced by one backtick more than its longest run of them,
// and padded with a space where it starts or ends with a backtick (a
// renderer strips one space at each end of a padded span).
func Code(s string) string {
	s = lineBreaks.Replace(s)
	longest := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			n := run(s, i)
			longest = max(longest, n)
			i += n - 1
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
