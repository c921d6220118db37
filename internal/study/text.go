package study

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// checkText refuses a study file that is not text as YAML reads it
// before any decoding: yaml.v3's own error for a byte that is not UTF-8
// or a control character ("invalid leading UTF-8 octet", "control
// characters are not allowed") has no line, and the file is often long
// (a binary pasted in, a file saved in Latin-1). It names the first bad
// byte's line and column. A UTF-16 file, with its byte order mark, is
// left to yaml.v3, which reads it.
func checkText(file string, data []byte) error {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		var why string
		switch {
		case r == utf8.RuneError && n <= 1:
			why = fmt.Sprintf("byte 0x%02X is not UTF-8: a study file is UTF-8 text (was it saved in another encoding?)", data[i])
		case !yamlPrintable(r):
			why = fmt.Sprintf("a control character (U+%04X), which YAML does not allow: a study file is text (tabs, line ends and printable characters)", r)
		}
		if why != "" {
			return &FieldError{File: file, Line: line, Msg: fmt.Sprintf("column %d: %s", col, why)}
		}
		if r == '\n' {
			line, col = line+1, 0
		}
		i += n
		col++
	}
	return nil
}

// yamlPrintable is YAML 1.2's c-printable, the characters yaml.v3's
// reader takes: tab, line feed, carriage return and the printable ones.
func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7E) || r == 0x85 ||
		(r >= 0xA0 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}
