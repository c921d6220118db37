package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// Where a journaled netem is put back. The agent enters a pod's namespace
// through a process of the pod (ProcPods), so the path it impairs through
// is PROC/PID/ns/net, which names whatever namespace holds that PID when
// it is opened. Journaled as such, a replay after the agent's restart
// (or a session's own revert, minutes later) followed the PID: reused by
// a process of another pod or of the node, it put back the qdisc of that
// namespace's device of the same name. So the record names the pod as
// the controller did ("pod:NS/NAME", which carries the run's ID) and the
// namespace's identity (nsfs device and inode) when the netem went in;
// the revert finds the pod again by its mark and acts only in the
// namespace with that identity:
//
//   - no marked process: the pod is gone, and its namespace with the
//     netem; the entry is done without touching anything;
//   - a marked process in another namespace: refused, named, and the entry
//     kept (the pod was recreated under its name, or a process outside it
//     carries its mark); once the pod is deleted the entry is done;
//   - the node's devices ("") need no identity: the agent is the node's.
//
// Records of an older agent name the namespace by PROC/PID/ns/net and
// nothing else, which cannot be checked: one whose path still names a
// namespace is left alone and reported (QdiscsLeft), as a value someone
// else changed is; one whose path is gone is done, as it was.

// qdiscRecord is what the agent journals for an impaired device (as
// journal.Qdisc's Prev): impair.Prev with Netns the controller's
// reference, and for a pod its namespace's identity. Being impair.Prev's
// fields and two more, impair.Recorded still reads it.
type qdiscRecord struct {
	impair.Prev
	NetnsDev uint64 `json:"netns_dev,omitempty"`
	NetnsIno uint64 `json:"netns_ino,omitempty"`
}

func (q qdiscRecord) id() nsID { return nsID{q.NetnsDev, q.NetnsIno} }

// recordQdisc journals rec before its device's qdisc changes and returns
// the record's sequence number.
func recordQdisc(j *journal.Journal, rec qdiscRecord) (int, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	return j.RecordQdisc(journal.Qdisc{Netns: rec.Netns, Dev: rec.Dev, Prev: b})
}

// recordedQdisc reads a qdisc record back, an older agent's included.
func recordedQdisc(q journal.Qdisc) (qdiscRecord, error) {
	var rec qdiscRecord
	if err := json.Unmarshal(q.Prev, &rec); err != nil {
		return rec, fmt.Errorf("qdisc of %s: %w", q.Dev, err)
	}
	return rec, nil
}

// qdiscOutcome says what reverting a journaled qdisc did.
type qdiscOutcome int

const (
	qdiscReverted qdiscOutcome = iota // impair.Revert ran in the namespace
	qdiscGone                         // the namespace is gone, the netem with it
	qdiscLeft                         // an older agent's record: not checkable, left alone
)

// netnsChangedError refuses to put back a pod's qdisc in a namespace
// other than the one the netem went into.
type netnsChangedError struct {
	pod      string
	was, now uint64
}

func (e *netnsChangedError) Error() string {
	return fmt.Sprintf("%s is now in network namespace net:[%d], not net:[%d] where the netem went in "+
		"(the pod was recreated under its name, or a process outside it carries its mark): nothing done there; "+
		"a recreated pod's old namespace went with the netem, and once the pod is deleted (`cnibench cleanup --kube` deletes a dead run's pods) this entry is done",
		where(e.pod), e.now, e.was)
}

// revertQdisc puts back rec's qdisc in the namespace rec names, checked
// as the notes above say.
func (f *nodeFS) revertQdisc(rec qdiscRecord) (qdiscOutcome, error) {
	revert := f.revertNetem
	if revert == nil {
		revert = impair.Revert
	}
	switch {
	case rec.Netns == "":
		return qdiscReverted, revert(rec.Prev)
	case filepath.IsAbs(rec.Netns):
		if !netns.Exists(rec.Netns) {
			return qdiscGone, nil
		}
		return qdiscLeft, nil
	case !strings.HasPrefix(rec.Netns, PodNetnsPrefix):
		return 0, fmt.Errorf("qdisc of %s in %q: not a namespace the agent knows: %w", rec.Dev, rec.Netns, tune.ErrBadPath)
	case f.pods == nil:
		return 0, fmt.Errorf("qdisc of %s of %s: no way to find pods here", rec.Dev, where(rec.Netns))
	case rec.NetnsIno == 0:
		return 0, fmt.Errorf("qdisc of %s of %s: the record holds no namespace identity, so the namespace cannot be told from another", rec.Dev, where(rec.Netns))
	}
	ref, release, err := f.open(rec.Netns, tune.FSSysfs)
	if errors.Is(err, tune.ErrGone) {
		return qdiscGone, nil
	}
	if err != nil {
		return 0, err
	}
	defer release()
	now, err := statNS(netns.Path(ref))
	if err != nil {
		return 0, fmt.Errorf("%s: its network namespace: %w", where(rec.Netns), err)
	}
	if now != rec.id() {
		return 0, &netnsChangedError{pod: rec.Netns, was: rec.NetnsIno, now: now.ino}
	}
	p := rec.Prev
	p.Netns = ref
	return qdiscReverted, revert(p)
}
