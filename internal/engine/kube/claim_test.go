package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/tune"
)

// TestUpClaimsTheNodes: a run's Up claims its nodes through their
// agents, so a second run from another namespace (which the Lease check
// does not see) is refused at its Up with the busy error, even while the
// first only measures (it changed nothing here), and leaves nothing
// behind; preflight's read-only session still works beside the run; once
// the first run has closed, the second comes up. Without the claim the
// second Up succeeded and both runs measured on the same nodes.
func TestUpClaimsTheNodes(t *testing.T) {
	cfg1 := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg1)
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir()}
	ctx := context.Background()
	c1, err := Up(ctx, cs, fx, cfg1, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := Config{RunID: "r2", Namespace: "other", Controller: "me/2/1"}.WithDefaults()
	_, err = Up(ctx, cs, fx, cfg2, place, nil)
	if !errors.Is(err, tune.ErrNodeBusy) || !strings.Contains(err.Error(), "claim: node ") || !strings.Contains(err.Error(), "is in use by run r1 (") {
		t.Fatalf("second run's Up beside a measuring run = %v; want the busy error naming run r1", err)
	}
	if runs, _ := ListRuns(ctx, cs, "other", time.Now()); len(runs) != 0 {
		t.Errorf("the refused run left %+v", runs)
	}
	err = withAgent(ctx, fx, DefaultAgentNamespace, c1.server.agentPod, preflightRun, func(a *agent.Client) error {
		_, err := a.Read("", "sysfs", "class/net/eth1/ifindex")
		return err
	})
	if err != nil {
		t.Errorf("preflight's read-only session beside the run = %v", err)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := Up(ctx, cs, fx, cfg2, place, nil)
	if err != nil {
		t.Fatalf("second run's Up once the first closed = %v", err)
	}
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
}
