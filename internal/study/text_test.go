package study

import (
	"strings"
	"testing"
)

// A byte that is not UTF-8, or a control character, is refused at its
// line and column before decoding: yaml.v3's own error has no line
// ("invalid leading UTF-8 octet"). Tabs, CRLF line ends and non-ASCII
// text are fine.
func TestStudyTextRefusedAtLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: caf\xe9}\n", "my.yaml:3: column 21: byte 0xE9 is not UTF-8"},
		{"apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata:\n  name: a\x07b\n", "my.yaml:4: column 10: a control character (U+0007)"},
		{"apiVersion: cnibench/v1alpha1\r\nkind: Study\x00\r\n", "my.yaml:2: column 12: a control character (U+0000)"},
		{"# caf\xc3\xa9 \xe2\x80\x94 \xc2\x9b\n", "my.yaml:1: column 10: a control character (U+009B)"},
	} {
		_, err := Parse("my.yaml", []byte(tc.text), Options{}, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want %s...", tc.text, err, tc.want)
		}
	}
	data := strings.Replace(withDefaults(""), "  name: f", "  name: f\n  description: \"caf\u00e9 \u2014 \U0001F680\"", 1)
	data = strings.ReplaceAll(strings.Replace(data, "  trials: 3", "  trials:\t3", 1), "\n", "\r\n")
	if _, err := Parse("my.yaml", []byte(data), Options{}, testCatalog); err != nil {
		t.Errorf("text with CRLF, a tab and non-ASCII characters: %v", err)
	}
}
