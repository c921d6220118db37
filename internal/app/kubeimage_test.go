package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/runner"
)

// --image given is passed on as such: a run without it takes the
// installed agent's image (kube.Config.ImageGiven), one with it must
// name that image.
func TestKubeImageGiven(t *testing.T) {
	for args, given := range map[string]bool{"": false, "--image x:1": true, "--image docker.io/cnibench/cnibench:dev": true} {
		var f kubeFlags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if got := f.config().ImageGiven; got != given {
			t.Errorf("%q: ImageGiven %v, want %v", args, got, given)
		}
	}
}

// Agents still on two images after --pod-timeout (their DaemonSet
// rolling out) stop a run at preflight as the cluster's passing state
// (engine.ErrTransient): exit 1, a runtime failure, with the engine's
// message; any other preflight refusal stays bad input, exit 2. A dry
// run's preflight says the same.
func TestAgentsMidRolloutExitFailure(t *testing.T) {
	differ := errors.New("the agents run different images: the agent on node w1 runs a, the one on node w2 b")
	for _, tc := range []struct {
		err  error
		want int
	}{
		{engine.Transient(differ), ExitFailure},
		{differ, ExitBadInput},
	} {
		for what, err := range map[string]error{"run": runFailure("", &runner.PreflightError{Err: tc.err}), "dry run": refusal(tc.err)} {
			var errb bytes.Buffer
			if code := exitCode(context.Background(), newRoot(io.Discard, io.Discard), err, &errb); code != tc.want || !strings.Contains(errb.String(), differ.Error()) {
				t.Errorf("%s, transient %v: exit %d, want %d: %s", what, errors.Is(tc.err, engine.ErrTransient), code, tc.want, errb.String())
			}
		}
	}
}
