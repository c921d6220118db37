package agent

import (
	"errors"
	"fmt"
	"sort"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/tune"
)

// Netem impairments of a node's devices, for the kube engine's impairment
// knob: the same impair.Apply and impair.Revert the local engine runs, on
// the node, with the device's qdisc journaled in the node journal before
// anything changes (journal.Qdisc, as the local run journal holds it). A
// session puts back what it still has impaired when it ends, and a dead
// session's qdiscs are put back by Replay, as its sysctl values are.

// ImpairArgs are OpImpair's: the netem and which direction.
type ImpairArgs struct {
	Spec impair.Spec `json:"spec"`
	// Ingress impairs what the device receives, through an ifb device.
	Ingress bool `json:"ingress,omitempty"`
}

// handleImpair answers the impairment ops and the feature probe that
// precedes them.
func (s *Server) handleImpair(req Request, resp *Response) error {
	var err error
	switch req.Op {
	case OpImpair, OpUnimpair:
		if len(req.Ifaces) != 1 {
			return fmt.Errorf("%s: want one device, got %d", req.Op, len(req.Ifaces))
		}
		if req.Op == OpImpair {
			var prev impair.Prev
			if prev, err = s.impair(req.Ifaces[0], req.Impair); err == nil {
				// What the netem got, its queue limit too: the
				// controller records it in env.json.
				installed := prev.Installed(req.Impair.Spec)
				resp.Value, resp.Netem = prev.Device(), &installed
			}
		} else {
			err = s.unimpair(req.Ifaces[0])
		}
	case OpQdiscStats:
		resp.Qdiscs, err = s.qdiscStats(req.Ifaces)
	case OpFeatures:
		resp.Files, err = s.cfg.Features(req.Args)
	}
	return err
}

type pendingQdisc struct {
	seq int
	rec qdiscRecord // as journaled: the pod's reference and namespace, not the path entered
}

func qdiscKey(ifc netns.Iface) string { return ifc.Netns + "|" + ifc.Name }

// impair installs a.Spec on ifc and returns what it found there, whose
// Device is where the netem sits (an ifb for ingress). A device the session already impairs is refused:
// the knob reverts each trial's impairment before the next. A pod's
// namespace is pinned (nodeFS.open) for the whole change, and its
// identity journaled with the pod's reference (qdiscns.go).
func (s *Server) impair(ifc netns.Iface, a *ImpairArgs) (impair.Prev, error) {
	if a == nil {
		return impair.Prev{}, errors.New("impair: no netem given")
	}
	ref, release, err := s.fs.open(ifc.Netns, tune.FSSysfs)
	if err != nil {
		return impair.Prev{}, fmt.Errorf("device %s: %w", ifc.Name, err)
	}
	defer release()
	var id nsID
	if ifc.Netns != "" {
		if id, err = statNS(netns.Path(ref)); err != nil {
			return impair.Prev{}, fmt.Errorf("device %s of %s: its network namespace: %w", ifc.Name, where(ifc.Netns), err)
		}
	}
	s.jmu.Lock()
	defer s.jmu.Unlock()
	k := qdiscKey(ifc)
	if _, ok := s.qdiscs[k]; ok {
		return impair.Prev{}, fmt.Errorf("impair %s of %s: this session already impairs it", ifc.Name, where(ifc.Netns))
	}
	// The node's lock before the qdisc that is there is read (nodelock.go).
	if err := s.openJournalLocked(); err != nil {
		return impair.Prev{}, err
	}
	apply := s.fs.applyNetem
	if apply == nil {
		apply = func(ns, dev string, sp impair.Spec, ingress bool, record func(impair.Prev) error) (impair.Prev, error) {
			if ingress {
				return impair.ApplyIngress(ns, dev, sp, record)
			}
			return impair.Apply(ns, dev, sp, record)
		}
	}
	seq := 0
	var rec qdiscRecord
	record := func(p impair.Prev) (err error) {
		p.Netns = ifc.Netns
		rec = qdiscRecord{Prev: p, NetnsDev: id.dev, NetnsIno: id.ino}
		seq, err = recordQdisc(s.j, rec)
		return err
	}
	prev, err := apply(ref, ifc.Name, a.Spec, a.Ingress, record)
	if seq > 0 {
		// Journaled: whether or not the netem went in, the revert is
		// what undoes it (a no-op when nothing was installed).
		s.qdiscs[k] = pendingQdisc{seq: seq, rec: rec}
	}
	if err != nil {
		// impair names the namespace by the path the agent resolved.
		err = fmt.Errorf("impair %s of %s: %w", ifc.Name, where(ifc.Netns), err)
		if seq > 0 {
			err = errors.Join(err, s.unimpairLocked(k))
		}
		return impair.Prev{}, err
	}
	return prev, nil
}

// unimpair puts back the qdisc of a device the session impaired; a device
// it does not impair is nothing to do.
func (s *Server) unimpair(ifc netns.Iface) error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	return s.unimpairLocked(qdiscKey(ifc))
}

// unimpairLocked finds the device's namespace again as a replay would:
// the pod may have gone, or its PID another process's, since the netem
// went in.
func (s *Server) unimpairLocked(k string) error {
	pq, ok := s.qdiscs[k]
	if !ok {
		return nil
	}
	if _, err := s.fs.revertQdisc(pq.rec); err != nil {
		return fmt.Errorf("revert the netem on %s of %s: %w", pq.rec.Dev, where(pq.rec.Netns), err)
	}
	delete(s.qdiscs, k)
	return s.j.MarkDone(pq.seq)
}

// revertQdiscsLocked puts back every qdisc the session still impairs,
// newest first.
func (s *Server) revertQdiscsLocked() (int, error) {
	var keys []string
	for k := range s.qdiscs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return s.qdiscs[keys[i]].seq > s.qdiscs[keys[j]].seq })
	var errs []error
	for _, k := range keys {
		errs = append(errs, s.unimpairLocked(k))
	}
	return len(keys) - len(s.qdiscs), errors.Join(errs...)
}

// qdiscStats reads the counters of the netem on each device.
func (s *Server) qdiscStats(ifs []netns.Iface) ([]impair.Stats, error) {
	res, err := s.resolveIfaces(ifs)
	if err != nil {
		return nil, err
	}
	out := make([]impair.Stats, len(res))
	for i := range res {
		st, err := impair.StatsOf(res[i : i+1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where(ifs[i].Netns), err)
		}
		out[i] = st[0]
	}
	return out, nil
}

// replayQdiscs puts back, newest first, the qdiscs a dead session
// impaired, each in the namespace its record names (fs.revertQdisc), and
// says what it did in sum. impair.Revert is idempotent: a netem never
// installed or already removed is success.
func replayQdiscs(r *journal.Replay, fs *nodeFS, sum *ReplaySummary) error {
	var errs []error
	pend := r.Pending()
	for i := len(pend) - 1; i >= 0; i-- {
		q := pend[i].Qdisc
		if q == nil {
			continue
		}
		rec, err := recordedQdisc(*q)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out, err := fs.revertQdisc(rec)
		if err != nil {
			errs = append(errs, fmt.Errorf("revert the netem on %s of %s: %w", q.Dev, where(rec.Netns), err))
			continue
		}
		switch out {
		case qdiscReverted:
			sum.Qdiscs++
		case qdiscGone:
			sum.Gone++
		case qdiscLeft:
			sum.QdiscsLeft = append(sum.QdiscsLeft, fmt.Sprintf("%s in %s", q.Dev, rec.Netns))
		}
	}
	return errors.Join(errs...)
}

// missingFeatures probes the named kernel features on this node (in a
// scratch namespace, as doctor does) and returns the missing ones with
// the probe's reason. Only kernel features are asked: the image's
// programs are OpMissing's.
func missingFeatures(names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		if !probe.IsKernel(n) {
			return nil, fmt.Errorf("features: %q is not a kernel feature cnibench probes", n)
		}
		if ok, why := probe.Has(n); !ok {
			out[n] = why
		}
	}
	return out, nil
}
