package localengine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
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

// A datapath this machine cannot build stops the run with the probe's
// reason and, when the study has others, the override that runs them.
func TestUnavailableDatapathSaysHowToRunTheOthers(t *testing.T) {
	s := &study.Study{}
	bad := engine.Datapath{Spec: study.Datapath{Name: "gone"}, Field: "spec.datapaths[0]", Features: []string{"no-such-feature"}}
	other := engine.Datapath{Spec: study.Datapath{Name: "bridge"}}
	err := (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{bad, other}}, &engine.Facts{})
	var at *study.FieldProblem
	if err == nil || !strings.HasPrefix(err.Error(), `spec.datapaths[0]: datapath gone: probe: unknown feature "no-such-feature"`) ||
		!strings.HasSuffix(err.Error(), "(to run without: --set skipUnavailable=true, which runs the others and notes it)") ||
		!errors.As(err, &at) || at.Field != "spec.datapaths[0]" {
		t.Errorf("two datapaths: %v (the entry's field, for its line)", err)
	}
	err = (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{bad}}, &engine.Facts{})
	if err == nil || strings.Contains(err.Error(), "skipUnavailable") {
		t.Errorf("the only datapath: %v", err)
	}
	s.Spec.SkipUnavailable = true
	f := &engine.Facts{}
	err = (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{bad}}, f)
	if err == nil || !strings.HasPrefix(err.Error(), "none of the study's datapaths can run here (datapath gone skipped") {
		t.Errorf("skipped, none left: %v (notes %v)", err, f.Notes)
	}
}
