package kube

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
)

// env.json of a kube run records its client node as fields (client_node:
// its name, host, kernel, CPU count), which a --resume checks and
// compare lists; a note naming it was all it had.
func TestDescribeClientNode(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1", Image: "registry.example/cnibench:t"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), tool: func(string, []string) (string, int) { return "", 1 }}
	c, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var e results.Env
	(&Engine{cfg: cfg}).Describe(engine.Run{ID: "r1", Study: stubStudy(t, "[{tool: iperf3}]")}, c, &e)
	host, _ := os.Hostname() // the fake agents run in this process
	if e.ClientNode == nil || e.ClientNode.Name != "w2" || e.ClientNode.Hostname != host || e.ClientNode.Kernel == "" || e.ClientNode.CPUs <= 0 {
		t.Errorf("client_node %+v: want node w2 as its agent describes it (host %s, a kernel, its CPUs)", e.ClientNode, host)
	}
}

// A client node its agent cannot describe keeps its name, the rest
// blank (unknown), with a note saying why.
func TestClientMachineBlankWhenInfoFails(t *testing.T) {
	var e results.Env
	clientMachine(&e, "w2", agent.NodeInfo{Hostname: "node-b", Kernel: "6.1.0", CPUs: 8}, errors.New("session closed"))
	if e.ClientNode == nil || *e.ClientNode != (results.ClientNodeEnv{Name: "w2"}) {
		t.Errorf("client_node %+v: want the name alone", e.ClientNode)
	}
	if len(e.Notes) != 1 || !strings.Contains(e.Notes[0], "client node w2's host, kernel and CPU count") || !strings.Contains(e.Notes[0], "session closed") {
		t.Errorf("notes %q: want one saying why they are blank", e.Notes)
	}
	e = results.Env{}
	clientMachine(&e, "w2", agent.NodeInfo{Hostname: "node-b", Kernel: "6.1.0", CPUs: 8, CPUModel: "Node CPU"}, nil)
	if want := (results.ClientNodeEnv{Name: "w2", Hostname: "node-b", Kernel: "6.1.0", CPUs: 8}); e.ClientNode == nil || *e.ClientNode != want || len(e.Notes) != 0 {
		t.Errorf("client_node %+v, notes %q; want %+v", e.ClientNode, e.Notes, want)
	}
}
