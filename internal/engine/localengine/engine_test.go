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
	// The first call must return before a long pause would end, not
	// within 300 ms of wall time, which a loaded CI machine need not
	// give even a call that waits for nothing; the second waits out a
	// short one.
	e.settle = 10 * time.Second
	ctx := context.Background()
	t0 := time.Now()
	if err := e.settleBeforeUp(ctx); err != nil || time.Since(t0) >= e.settle {
		t.Errorf("first cluster: %v after %v, want no wait", err, time.Since(t0))
	}
	e.settle = 300 * time.Millisecond
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
}

// With spec.skipUnavailable and no datapath this machine can build, the
// run is refused at spec.datapaths (the study's line or the --set that
// gave the list), with each datapath's reason; none is "skipped", since
// nothing runs.
func TestNoDatapathCanRunIsOneErrorAtTheList(t *testing.T) {
	s := &study.Study{}
	s.Spec.SkipUnavailable = true
	gone := engine.Datapath{Spec: study.Datapath{Name: "gone"}, Field: "spec.datapaths[0]", Features: []string{"no-such-feature"}}
	lost := engine.Datapath{Spec: study.Datapath{Name: "lost"}, Field: "spec.datapaths[1]", Features: []string{"other-feature"}}
	f := &engine.Facts{}
	err := (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{gone, lost}}, f)
	var at *study.FieldProblem
	if err == nil || !errors.As(err, &at) || at.Field != "spec.datapaths" {
		t.Fatalf("none left: %v, want a problem at spec.datapaths", err)
	}
	want := `spec.datapaths: none of the study's 2 datapaths can be built here, so skipUnavailable would leave nothing to run: ` +
		`datapath gone: probe: unknown feature "no-such-feature"; datapath lost: probe: unknown feature "other-feature"`
	if err.Error() != want || strings.Contains(err.Error(), "skipped") || len(f.Notes) > 0 {
		t.Errorf("none left:\n got %v\nwant %s (notes %v)", err, want, f.Notes)
	}
	err = (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{gone}}, f)
	if err == nil || !strings.HasPrefix(err.Error(), "spec.datapaths: the study's one datapath cannot be built here") {
		t.Errorf("the only datapath: %v", err)
	}
}
