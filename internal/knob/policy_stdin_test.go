package knob

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// stdinNode is an emulated node that records the programs it runs and
// their stdin.
type stdinNode struct {
	fakeNode
	ran   []string
	stdin []byte
}

func (n *stdinNode) record(argv []string) {
	n.ran = append(n.ran, strings.Join(argv, " "))
}

func (n *stdinNode) Start(_ context.Context, argv []string) (engine.Process, error) {
	n.record(argv)
	return exitedProc{}, nil
}

func (n *stdinNode) StartInput(_ context.Context, argv []string, stdin []byte) (engine.Process, error) {
	n.record(argv)
	n.stdin = stdin
	return exitedProc{}, nil
}

type exitedProc struct{}

func (exitedProc) Wait() ([]byte, []byte, error) { return nil, nil, nil }
func (exitedProc) Stop()                         {}

// The policy's rules reach iptables-restore on its stdin: before, they
// went through .policy-DATAPATH-NODE.rules in the results directory,
// which a run killed while iptables-restore ran left
// there.
func TestPolicyRulesGoOnStdin(t *testing.T) {
	n := &stdinNode{fakeNode: fakeNode{name: "server", ns: "cnb-r1-node-server"}}
	tgt := &Target{Datapath: study.Datapath{Name: "calico-ipip", Policy: "felix"}}
	rules := []byte("*filter\nCOMMIT\n")
	if err := restore(context.Background(), tgt, n, rules); err != nil {
		t.Fatal(err)
	}
	if strings.Join(n.ran, "\n") != "iptables-restore --noflush" || string(n.stdin) != string(rules) {
		t.Errorf("ran %q with stdin %q, want iptables-restore --noflush with the rules", n.ran, n.stdin)
	}
}
