package metrics

import (
	"os"
	"strings"
	"testing"
)

func TestMemoryPercent(t *testing.T) {
	p := t.TempDir() + "/meminfo"
	if err := os.WriteFile(p, []byte("MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    250 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := MemoryPercent(p); err != nil || v != 75 {
		t.Errorf("MemoryPercent = %v, %v", v, err)
	}
	if _, err := MemoryPercent(p + "x"); err == nil {
		t.Error("missing file read")
	}
	old := t.TempDir() + "/meminfo-3.10"
	if err := os.WriteFile(old, []byte("MemTotal:       1000 kB\nMemFree:         100 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := MemoryPercent(old); err == nil {
		t.Errorf("no MemAvailable: %v%% in use, want an error (not 100%%)", v)
	}
}

// Values are kB counts: NaN, Inf, a negative or fractional number, or
// more available than in total is an error naming the file, not a
// percentage that is no number or out of 0-100.
func TestMemoryPercentRejectsNonCounts(t *testing.T) {
	for _, body := range []string{
		"MemTotal: NaN kB\nMemAvailable: 0 kB\n",
		"MemTotal: Inf kB\nMemAvailable: 0 kB\n",
		"MemTotal: 1000 kB\nMemAvailable: NaN kB\n",
		"MemTotal: 1000 kB\nMemAvailable: -5 kB\n",
		"MemTotal: 1e3 kB\nMemAvailable: 250 kB\n",
		"MemTotal: 1000 kB\nMemAvailable: 2000 kB\n",
	} {
		p := t.TempDir() + "/meminfo"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := MemoryPercent(p)
		if err == nil {
			t.Errorf("%q: %v%%, want an error", body, v)
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %q does not name the file", body, err)
		}
	}
}

// Whatever a meminfo file holds, the parser gives an error or a
// percentage within 0-100.
func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    250 kB\n"))
	f.Add([]byte("MemTotal: NaN kB\nMemAvailable: 0 kB\n"))
	f.Add([]byte("MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseMeminfo(b)
		if err == nil && !(v >= 0 && v <= 100) {
			t.Errorf("%q: %v%%", b, v)
		}
	})
}
