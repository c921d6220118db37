package kube

import (
	"bufio"
	"encoding/json"
	"io"
	"testing"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/metrics"
)

// TestSharedSampler: two collectors sampling one node over one window
// (per-core CPU and the nodes' CPU %) start the agent's one sampler once
// and stop it once, and both get the window; a second window starts it
// again.
func TestSharedSampler(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	c := agent.NewClient(reqW, respR)
	c.SetRun("t")
	var ops []string
	go func() {
		sc := bufio.NewScanner(reqR)
		enc := json.NewEncoder(respW)
		for sc.Scan() {
			var r agent.Request
			_ = json.Unmarshal(sc.Bytes(), &r)
			ops = append(ops, r.Op)
			resp := agent.Response{ID: r.ID}
			if r.Op == agent.OpSampleStop {
				resp.Window = &metrics.Window{}
			}
			_ = enc.Encode(resp)
		}
	}()
	k := agentKernel{a: c}
	for window := 0; window < 2; window++ {
		a, b := k.CPU(), k.CPU()
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatalf("second collector's start: %v", err)
		}
		if _, err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := k.CPU().Stop(); err == nil {
		t.Error("stop without start succeeded")
	}
	reqW.Close()
	want := []string{agent.OpSampleStart, agent.OpSampleStop, agent.OpSampleStart, agent.OpSampleStop}
	if len(ops) != len(want) {
		t.Fatalf("agent saw %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Fatalf("agent saw %v, want %v", ops, want)
		}
	}
}
