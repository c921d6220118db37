package runner

import (
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
)

func TestPodNetworkTimes(t *testing.T) {
	if podNetworkTimes(nil) != nil {
		t.Error("no pods should give nil")
	}
	got := podNetworkTimes([]engine.PodTime{
		{Setup: 2 * time.Millisecond, Teardown: 1 * time.Millisecond},
		{Setup: 4 * time.Millisecond, Teardown: 3 * time.Millisecond},
		{Setup: 30 * time.Millisecond}, // still up: no teardown yet
	})
	if got.Pods != 3 || got.SetupMedianMs != 4 || got.SetupMaxMs != 30 ||
		got.TeardownPods != 2 || got.TeardownMedianMs != 2 || got.TeardownMaxMs != 3 {
		t.Errorf("%+v", got)
	}
}
