package agent

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/metrics/nftrace"
	"github.com/cnibench/cnibench/internal/netns"
)

// TestKernelAgentTraceSweptAndStopped: in a node namespace, a session's
// trace makes its table and the session's end (Revert, as Serve does when
// the controller goes away) deletes it; the replay the daemon runs deletes
// the table of a session that died without stopping its trace, and keeps
// a live one's.
func TestKernelAgentTraceSweptAndStopped(t *testing.T) {
	kerneltest.RequireRoot(t)
	ns := scratchNS(t, "trc")
	kerneltest.RequireNfTables(t, ns)
	tables := func() string {
		out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "tables").CombinedOutput()
		if err != nil {
			t.Fatalf("nft list tables: %v: %s", err, out)
		}
		return string(out)
	}
	dead := nftrace.TablePrefix + "1_1"
	if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "add", "table", "inet", dead).CombinedOutput(); err != nil {
		t.Fatalf("nft add table inet %s: %v: %s", dead, err, out)
	}
	s := NewServer(Config{Run: "trc", FS: testNode(), JournalDir: t.TempDir()})
	var resp Response
	err := netns.Do(ns, func() error {
		if err := s.handleTrace(Request{Op: OpTraceStart, Args: []string{"10.1.0.1", "10.1.0.2"}}, &resp); err != nil {
			return err
		}
		sum, err := s.replay()
		if sum.Traces != 1 || err != nil {
			t.Errorf("replay swept %d tables (%v), want the dead session's one", sum.Traces, err)
		}
		if got := tables(); strings.Contains(got, dead) || strings.Count(got, nftrace.TablePrefix) != 1 {
			t.Errorf("after the sweep, want this session's table only:\n%s", got)
		}
		_, err = s.Revert()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := tables(); strings.Contains(got, nftrace.TablePrefix) {
		t.Errorf("the session's end left a trace table:\n%s", got)
	}
}
