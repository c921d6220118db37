package journal

import (
	"encoding/json"
	"fmt"
)

// Qdisc records a device's queueing discipline about to be replaced (a
// netem impairment): Prev is what the device had and how to put it back,
// as package impair describes it (impair.Prev). The journal keeps it
// opaque so it does not depend on the code that interprets it; cleanup
// hands it back to impair.Revert. Netns "" is the host.
type Qdisc struct {
	Netns string          `json:"netns"`
	Dev   string          `json:"dev"`
	Prev  json.RawMessage `json:"prev"`
}

// RecordQdisc writes a Qdisc before the device's qdisc is changed and
// returns its sequence number for MarkDone (once the old qdisc is back).
func (j *Journal) RecordQdisc(q Qdisc) (int, error) {
	if q.Dev == "" || len(q.Prev) == 0 {
		return 0, fmt.Errorf("journal qdisc: device and previous state required")
	}
	return j.add(record{Qdisc: &q})
}
