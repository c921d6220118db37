package collect

import (
	"context"
	"time"

	"github.com/prometheus/procfs"

	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/metrics/outside"
)

// outsideEntry measures what else used this machine during the window,
// for the noise guard (docs/statistics.md, "Noise guard"). On a cluster
// the nodes are other machines and it records nothing.
var outsideEntry = Entry{
	Name: "outside",
	Description: "CPU of processes outside the run (user processes in the host's network namespace that cnibench did not start), " +
		"in percent of this machine's CPU time (/proc/PID/stat; local engine only)",
	Metrics: []string{"noise.outside_cpu_pct in samples.jsonl"},
	Enabled: always,
	New: func(t Trial) (Collector, error) {
		if !t.Local {
			return nop{}, nil
		}
		fs, err := procfs.NewDefaultFS()
		if err != nil {
			return nil, err
		}
		return &outsideCollector{fs: fs}, nil
	},
}

type outsideCollector struct {
	fs    procfs.FS
	start time.Time
	snap  outside.Snapshot
}

func (c *outsideCollector) Start(context.Context) error {
	s, err := outside.Take(c.fs, outside.Self())
	c.snap, c.start = s, time.Now()
	return err
}

func (c *outsideCollector) Stop(context.Context) (Result, error) {
	s, err := outside.Take(c.fs, outside.Self())
	if err != nil {
		return Result{}, err
	}
	pct := outside.Percent(outside.Between(c.snap, s), time.Since(c.start).Seconds(), len(hostcpus.Machine()))
	return Result{OutsidePct: &pct}, nil
}

// nop records nothing.
type nop struct{}

func (nop) Start(context.Context) error          { return nil }
func (nop) Stop(context.Context) (Result, error) { return Result{}, nil }
