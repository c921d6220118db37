package proc

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
)

// StartTied is Start in cnibench's own network namespace, unpinned, for
// a program that must not outlive this process however it ends: the
// kernel kills it (SIGKILL, Pdeathsig; netns.StartTied) when cnibench
// dies, SIGKILL and OOM kill included, which no cleanup of cnibench's
// own can follow. A kube node agent's perf record -a is one: nothing
// else on the node would stop it, and it would sample every CPU of the
// node and fill the agent's /tmp until the agent pod goes.
func StartTied(ctx context.Context, argv []string) (engine.Process, error) {
	return startWith(ctx, argv, nil, func(cmd *exec.Cmd) error {
		if err := netns.StartTied(cmd); err != nil {
			return fmt.Errorf("start %s: %w", argv[0], err)
		}
		return nil
	})
}
