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
}
