package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The plain lines' ETA is what every cell at its maximum would take at
// the pace so far, but never past the budget's end, which stops the run
// first.
func TestPlainETA(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		deadline time.Time
		want     string
	}{
		{time.Time{}, "[1/10] a (elapsed 10s, eta 1m30s)\n"},
		{t0.Add(4 * time.Minute), "[1/10] a (elapsed 10s, eta 1m30s)\n"},
		{t0.Add(time.Minute), "[1/10] a (elapsed 10s, eta 50s)\n"},
		{t0.Add(5 * time.Second), "[1/10] a (elapsed 10s, eta 0s)\n"},
	} {
		var buf bytes.Buffer
		now := t0
		p := &plain{w: &buf, now: func() time.Time { return now }}
		p.Begin(10, c.deadline)
		now = now.Add(10 * time.Second)
		p.Step("a")
		if got := strings.TrimPrefix(buf.String(), "running up to 10 trials\n"); got != c.want {
			t.Errorf("deadline %v: %q, want %q", c.deadline, got, c.want)
		}
	}
}

// A run with no trial left (a finished run resumed) says so once, on a
// terminal's bar as in plain lines, rather than "running up to 0 trials"
// or a bar of no steps.
func TestNothingLeft(t *testing.T) {
	for name, r := range map[string]func(*bytes.Buffer) Reporter{
		"plain": func(b *bytes.Buffer) Reporter { return &plain{w: b} },
		"bar":   func(b *bytes.Buffer) Reporter { return &bar{w: b} },
	} {
		var buf bytes.Buffer
		p := r(&buf)
		p.Begin(0, time.Time{})
		p.Logf("note")
		p.End()
		if got := buf.String(); got != nothingLeft+"\nnote\n" {
			t.Errorf("%s: %q, want %q", name, got, nothingLeft+"\nnote\n")
		}
	}
}
