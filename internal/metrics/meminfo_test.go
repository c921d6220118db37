package metrics

import (
	"os"
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
