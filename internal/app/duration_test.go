package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A refused --budget is quoted as the user wrote it, and the bound as a
// user would write it.
func TestBudgetQuotedAsGiven(t *testing.T) {
	for args, want := range map[string]string{
		"run rps-rfs --budget -1h":     "--budget -1h: want a positive duration such as 30m or 2h, at most 720h\n",
		"run rps-rfs --budget 1000h":   "--budget 1000h: want a positive duration",
		"advise --prove --budget -90s": "--budget -90s: want a positive duration such as 5m",
		"advise --prove --budget 800h": "--budget 800h: want a positive duration such as 5m, at most 720h\n",
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), strings.Fields(args), &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), want) {
			t.Errorf("%s: exit %d, %q; want %d and %q", args, code, errb.String(), ExitBadInput, want)
		}
	}
}
