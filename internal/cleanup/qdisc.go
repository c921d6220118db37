package cleanup

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
)

// revertQdiscs puts back, newest first, the qdiscs a dead run replaced
// with netem (journal.Qdisc, written by knob impair before the change).
// impair.Revert is idempotent: a netem never installed, already removed
// or gone with its namespace or device is success.
func (c *cleaner) revertQdiscs(run string, r *journal.Replay) {
	pend := r.Pending()
	for i := len(pend) - 1; i >= 0; i-- {
		q := pend[i].Qdisc
		if q == nil {
			continue
		}
		ns := q.Netns
		if ns == "" {
			ns = "host"
		}
		prev, err := impair.Recorded(*q)
		if err != nil {
			c.fail(fmt.Errorf("journal %s: %w", r.Path, err))
			continue
		}
		what := "the kernel's default root qdisc"
		if !prev.Default && prev.Kind != "" {
			what = prev.Kind
		}
		c.rep.add(run, ActRevert, ns+":"+q.Dev, "netem removed, "+what+" restored")
		if c.opts.DryRun {
			continue
		}
		if err := impair.Revert(prev); err != nil {
			c.fail(fmt.Errorf("revert qdisc of %s in %s: %w", q.Dev, ns, err))
		}
	}
}
