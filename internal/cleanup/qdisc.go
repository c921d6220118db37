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
		if !c.opts.DryRun {
			if err := c.revertQdisc(prev); err != nil {
				c.fail(fmt.Errorf("revert qdisc of %s in %s: %w", q.Dev, ns, err))
				continue
			}
		}
		c.rep.add(run, ActRevert, ns+":"+q.Dev, qdiscUndone(prev))
	}
}

// qdiscUndone says what undoing a journaled impairment does (or, in a dry
// run, would do), as impair.Revert does it.
func qdiscUndone(p impair.Prev) string {
	switch {
	case p.IFB != "":
		// Ingress: the device's root qdisc was never touched.
		return fmt.Sprintf("ingress impairment removed: the ingress qdisc of %s (redirecting to %s) deleted, and the ifb device %s with its netem", p.Dev, p.IFB, p.IFB)
	case p.Child != nil:
		return fmt.Sprintf("netem under %s removed, its inner %s queue (limit %d bytes) back", p.Kind, p.Child.Kind, p.Child.Limit)
	}
	return "netem removed, the kernel's default root qdisc back"
}
