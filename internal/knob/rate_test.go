package knob

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// A link rate that fails on the second node unshapes the first; when
// that fails too, the first node's underlay stays shaped, and the error
// holds a *RevertError (knob.Apply's contract), on which the runner
// stops the run. A clean unshape is no RevertError. The shaper's qdisc
// operations are stood in for.
func TestLinkRateFailedUndoIsRevertError(t *testing.T) {
	shape, unshape := shapeTBF, unshapeTBF
	defer func() { shapeTBF, unshapeTBF = shape, unshape }()
	var log []string
	unshapeFails := true
	shapeTBF = func(ns, dev string, rate uint64) error {
		if ns == "client-ns" {
			return errors.New("no tbf here")
		}
		log = append(log, "shape "+ns)
		return nil
	}
	unshapeTBF = func(ns, dev string) error {
		log = append(log, "unshape "+ns)
		if unshapeFails {
			return errors.New("qdisc busy")
		}
		return nil
	}
	srv, cli := &fakeNode{name: "server", ns: "server-ns"}, &fakeNode{name: "client", ns: "client-ns"}
	tgt := func() *Target {
		s := &study.Study{}
		s.Spec.Link.Rate = "1G"
		return &Target{Study: s, Cluster: fakeCluster{srv, cli}}
	}
	var rerr *RevertError
	_, err := applyLinkRate(context.Background(), tgt())
	if err == nil || !errors.As(err, &rerr) || !strings.Contains(err.Error(), "no tbf here") || !strings.Contains(rerr.Error(), "qdisc busy") {
		t.Errorf("failed unshape: %v, want a *RevertError naming both failures", err)
	}
	if got := strings.Join(log, "|"); got != "shape server-ns|unshape server-ns" {
		t.Errorf("calls %s", got)
	}
	unshapeFails = false
	if _, err := applyLinkRate(context.Background(), tgt()); err == nil || errors.As(err, &rerr) {
		t.Errorf("clean unshape: %v, want an error that is no *RevertError", err)
	}
}
