package iperf3

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/proc"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// hostPod runs its programs for real, in cnibench's own namespace.
type hostPod struct{ name string }

func (p hostPod) Name() string { return p.name }
func (p hostPod) Node() string { return "node-" + p.name }
func (p hostPod) IP() net.IP   { return net.IPv4(127, 0, 0, 1) }
func (p hostPod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return proc.Start(ctx, "", nil, argv)
}

// hangingProgram is a test fixture: a program that never exits on its own.
func hangingProgram(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "iperf3")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A background client that hangs (a real process that never exits) ends
// at the background's deadline with an error naming it, instead of
// holding the trial (and the run) forever.
func TestBackgroundClientThatHangsMeetsItsDeadline(t *testing.T) {
	p0, _, _ := pair(0, fixed(t, "tcp-server.json"), fixed(t, "tcp-client.json"))
	tr := trial(p0)
	tr.Duration, tr.Warmup = time.Second, 0
	tr.Background = []workload.Pair{{Server: hostPod{"bs"}, Client: hostPod{"bc"}, Port: 5202}}
	tr.Spec.Background = &study.Background{Connections: []int{1}, Pairs: 1, Rate: "10M"}
	d := fastDriver()
	d.Bin = hangingProgram(t)
	d.TrialSlack = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() { _, err := d.Run(context.Background(), tr); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // far beyond the 2.2 s deadline (and StopGrace)
		t.Fatal("Run did not return a minute after the background's deadline")
	}
	if err == nil || !strings.Contains(err.Error(), "background load did not finish within 2.2s") {
		t.Fatalf("error %v, want the background deadline", err)
	}
}
