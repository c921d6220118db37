package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// An Up that failed (and deleted what it made) leaves the engine as it
// was: the runner tries it once more (runner.setUpAttempts), and that
// attempt must meet the cluster again, not "runs one datapath per run".
// Before, the engine counted the failed Up as its one datapath, and the
// retry failed with that instead of the cluster's own error.
func TestUpAgainAfterAFailedUp(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	cs.PrependReactor("create", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server is currently unable to handle the request")
	})
	b := &Engine{cfg: cfg, cs: cs, place: place}
	for attempt := 1; attempt <= 2; attempt++ {
		_, _, err := b.Up(context.Background(), engine.Run{ID: "r1"}, engine.Datapath{Spec: study.Datapath{Name: "calico"}})
		if err == nil || !strings.Contains(err.Error(), "unable to handle the request") || errors.Is(err, engine.ErrLeftBehind) {
			t.Errorf("Up attempt %d = %v; want the cluster's error, nothing left behind", attempt, err)
		}
	}
}
