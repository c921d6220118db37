package localengine

import (
	"context"
	"testing"
	"time"
)

// A cluster after the first waits for the kernel to destroy the
// namespaces of the one before (clusterSettle); the first does not wait,
// and a cancelled run does not wait out the pause.
func TestSettleBeforeLaterClusters(t *testing.T) {
	e := New("")
	if e.settle != clusterSettle {
		t.Fatalf("settle %v, want %v", e.settle, clusterSettle)
	}
	e.settle = 300 * time.Millisecond
	ctx := context.Background()
	t0 := time.Now()
	if err := e.settleBeforeUp(ctx); err != nil || time.Since(t0) >= e.settle {
		t.Errorf("first cluster: %v after %v, want no wait", err, time.Since(t0))
	}
	t0 = time.Now()
	if err := e.settleBeforeUp(ctx); err != nil || time.Since(t0) < e.settle {
		t.Errorf("second cluster: %v after %v, want a wait of %v", err, time.Since(t0), e.settle)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.settleBeforeUp(cctx); err == nil {
		t.Error("cancelled: no error")
	}
}
