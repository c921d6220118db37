package impair

import (
	"encoding/json"
	"fmt"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// Record journals what Apply found on a device (its record callback's
// Prev) as a journal.Qdisc, before anything changes, and returns the
// record's sequence number for MarkDone once the device is back. The
// journal keeps Prev opaque; Recorded reads it back. Both the run's
// journal (knob impairment) and a node agent's use it.
func Record(j *journal.Journal, p Prev) (int, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	return j.RecordQdisc(journal.Qdisc{Netns: p.Netns, Dev: p.Dev, Prev: b})
}

// Recorded is the Prev a journal.Qdisc record holds, for Revert.
func Recorded(q journal.Qdisc) (Prev, error) {
	var p Prev
	if err := json.Unmarshal(q.Prev, &p); err != nil {
		return p, fmt.Errorf("qdisc of %s: %w", q.Dev, err)
	}
	return p, nil
}

// StatsOf reads the counters of the netem on each device (QdiscStats).
func StatsOf(ifs []netns.Iface) ([]Stats, error) {
	out := make([]Stats, len(ifs))
	for i, ifc := range ifs {
		s, err := QdiscStats(ifc.Netns, ifc.Name)
		if err != nil {
			return nil, fmt.Errorf("netem counters of %s: %w", ifc.Name, err)
		}
		out[i] = s
	}
	return out, nil
}
