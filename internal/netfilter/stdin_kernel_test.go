package netfilter_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netfilter"
)

// TestKernelRulesOnStdin: the real iptables-restore and nft load rules
// from their stdin (Apply, Restore, ApplyNFT), in a throw-away namespace
// journaled in the test's own directory.
func TestKernelRulesOnStdin(t *testing.T) {
	requireIptables(t)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skipf("skipped: %v", err)
	}
	run := kerneltest.RunID()
	j, err := journal.Open(t.TempDir(), run, "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := j.Close(); err != nil {
			t.Error(err)
		}
	})
	r := netfilter.InNetns(scratch(t, j, run, "stdin"))
	ctx := context.Background()
	snap, err := netfilter.Snapshot(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	rs := netfilter.New()
	rs.Chain("filter", "CNB-STDIN")
	rs.Append("filter", "CNB-STDIN", "-j ACCEPT")
	if err := netfilter.Apply(ctx, r, rs); err != nil {
		t.Fatal(err)
	}
	if out, _ := r(ctx, []string{"iptables-save", "-t", "filter"}, nil); !strings.Contains(string(out), "-A CNB-STDIN -j ACCEPT") {
		t.Errorf("the rule set is not in iptables-save:\n%s", out)
	}
	if err := netfilter.ApplyNFT(ctx, r, []byte("add table ip cnbstdin\n")); err != nil {
		t.Fatal(err)
	}
	if out, _ := r(ctx, []string{"nft", "list", "tables", "ip"}, nil); !strings.Contains(string(out), "table ip cnbstdin") {
		t.Errorf("the nft script's table is not there:\n%s", out)
	}
	if err := netfilter.Restore(ctx, r, snap); err != nil {
		t.Fatal(err)
	}
	if out, _ := r(ctx, []string{"iptables-save", "-t", "filter"}, nil); strings.Contains(string(out), "CNB-STDIN") {
		t.Errorf("the snapshot's restore left the chain:\n%s", out)
	}
}
