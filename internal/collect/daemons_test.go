package collect

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
)

func TestParseStatTicks(t *testing.T) {
	// A command name with a space and a parenthesis, as the kernel prints it.
	stat := []byte("4242 (flan ne)d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 12345 123456789 2048 18446744073709551615")
	got, err := parseStatTicks(stat)
	if err != nil || got != 325 {
		t.Fatalf("ticks = %d, %v; want 325", got, err)
	}
	if _, err := parseStatTicks([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("short stat accepted")
	}
}

func TestParseRSS(t *testing.T) {
	got, err := parseRSS([]byte("Name:\tetcd\nVmPeak:\t  100 kB\nVmRSS:\t   2048 kB\n"))
	if err != nil || got != 2048*1024 {
		t.Fatalf("rss = %v, %v", got, err)
	}
	if _, err := parseRSS([]byte("Name:\tkworker\n")); err == nil {
		t.Error("missing VmRSS accepted")
	}
}

// Watching this test process itself: it burns CPU, so the share is > 0,
// and its RSS is non-zero.
func TestDaemonWatchMeasuresItself(t *testing.T) {
	w := &daemonWatch{daemons: []datapath.Daemon{{Name: "self", Node: "host", PID: os.Getpid()}}}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	r, err := w.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metrics
	if m["daemon_self_host_cpu_pct"] <= 0 || m["daemons_rss_bytes"] <= 0 {
		t.Fatalf("metrics %v (spun %d times)", m, x)
	}
	if m["daemons_cpu_pct"] != m["daemon_self_host_cpu_pct"] {
		t.Errorf("sum %v != single %v", m["daemons_cpu_pct"], m["daemon_self_host_cpu_pct"])
	}
}

func FuzzParseStatTicks(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 1 0 1 1 1 1"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseStatTicks(b) })
}
