package netfilter

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// feedRecorder is a Runner that records each program's argv and what
// it got on stdin.
type feedRecorder struct {
	calls []string
}

func (f *feedRecorder) run(_ context.Context, argv []string, stdin []byte) ([]byte, error) {
	f.calls = append(f.calls, strings.Join(argv, " ")+" <<< "+string(stdin))
	return nil, nil
}

// The rules reach iptables-restore and nft on their stdin, the argv
// naming no file: a rules file written in the run's results directory
// while the program ran was left there, hidden, by a kill -9.
func TestRulesGoOnStdin(t *testing.T) {
	for _, tool := range []string{"iptables-restore", "iptables-save", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	rs := New()
	rs.Chain("filter", "CNB-TEST")
	rs.Append("filter", "CNB-TEST", "-j ACCEPT")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		do   func(Runner) error
		want string
	}{
		{"Apply", func(r Runner) error { return Apply(ctx, r, rs) }, "iptables-restore --noflush <<< " + string(rs.Bytes())},
		{"Test", func(r Runner) error { return Test(ctx, r, rs) }, "iptables-restore --test --noflush <<< " + string(rs.Bytes())},
		{"Restore", func(r Runner) error { return Restore(ctx, r, []byte("*filter\nCOMMIT\n")) }, "iptables-restore <<< *filter\nCOMMIT\n*raw\n"},
		{"ApplyNFT", func(r Runner) error { return ApplyNFT(ctx, r, []byte("add table ip cnb\n")) }, "nft -f - <<< add table ip cnb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &feedRecorder{}
			if err := tc.do(f.run); err != nil {
				t.Fatal(err)
			}
			if len(f.calls) != 1 || !strings.HasPrefix(f.calls[0], tc.want) {
				t.Errorf("ran %q, want %q", f.calls, tc.want)
			}
		})
	}
}

// OnNode hands stdin to a node that takes it and refuses one that does
// not, rather than run the program with no input.
func TestOnNodeStdin(t *testing.T) {
	if _, err := OnNode(plainNode{})(context.Background(), []string{"iptables-restore"}, []byte("*filter\nCOMMIT\n")); err == nil || !strings.Contains(err.Error(), "takes no input") {
		t.Errorf("a node without stdin: %v", err)
	}
	n := &inputNode{}
	if _, err := OnNode(n)(context.Background(), []string{"iptables-restore"}, []byte("*filter\nCOMMIT\n")); err != nil || !bytes.Equal(n.stdin, []byte("*filter\nCOMMIT\n")) {
		t.Errorf("a node with stdin: %v, got %q", err, n.stdin)
	}
}

// plainNode is a node without stdin (engine.Node's other methods unused).
type plainNode struct{ engine.Node }

func (plainNode) Name() string { return "plain" }

// inputNode is a node that takes stdin and records it.
type inputNode struct {
	plainNode
	stdin []byte
}

func (n *inputNode) StartInput(_ context.Context, _ []string, stdin []byte) (engine.Process, error) {
	n.stdin = stdin
	return exited{}, nil
}

type exited struct{}

func (exited) Wait() ([]byte, []byte, error) { return nil, nil, nil }
func (exited) Stop()                         {}
