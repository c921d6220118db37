package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0", 5 * time.Minute: "5m", 720 * time.Hour: "720h",
		90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 500 * time.Millisecond: "500ms"} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A refused --budget is quoted as the user wrote it, and the bound as a
// user would write it.
func TestBudgetQuotedAsGiven(t *testing.T) {
	for args, want := range map[string]string{
		"run rps-rfs --budget -1h":     "--budget -1h: want a positive duration such as 30m or 2h, at most 720h\n",
		"run rps-rfs --budget 1000h":   "--budget 1000h: want a positive duration",
		"advise --prove --budget -90s": "--budget -90s: want a positive duration such as 5m",
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), strings.Fields(args), &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), want) {
			t.Errorf("%s: exit %d, %q; want %d and %q", args, code, errb.String(), ExitBadInput, want)
		}
	}
}
