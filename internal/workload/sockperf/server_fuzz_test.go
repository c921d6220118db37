package sockperf

import (
	"strings"
	"testing"
)

// FuzzParseServerError: a server's output is someone else's text. An
// error is reported exactly when it says "ERROR:", and its message is one
// trimmed line.
func FuzzParseServerError(f *testing.F) {
	f.Add([]byte("sockperf: == version #3.10 ==\nsockperf: [SERVER] listen on:\n"))
	f.Add([]byte("\x1b[31msockperf: ERROR: Address already in use\x1b[0m\nsockperf: exit\n"))
	f.Add([]byte("ERROR:"))
	f.Fuzz(func(t *testing.T, out []byte) {
		err := ParseServerError(out)
		if err == nil {
			if strings.Contains(string(out), "ERROR:") && !strings.Contains(string(out), "\x1b") {
				t.Fatalf("ERROR: in %q not reported", out)
			}
			return
		}
		te, ok := err.(*ToolError)
		if !ok {
			t.Fatalf("error %T", err)
		}
		if te.Msg != strings.TrimSpace(te.Msg) || strings.ContainsAny(te.Msg, "\n\t") {
			t.Fatalf("message %q not one trimmed line", te.Msg)
		}
	})
}
