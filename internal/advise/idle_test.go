package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// cpu-idle is a candidate only while some CPU can still enter a slow
// state under the PM QoS limits: after tuned's latency-performance
// (/dev/cpu_dma_latency held at 1 µs) the menu governor keeps every
// core out of C1E and C6, and the rule no longer fires; a limit of 10 µs
// leaves C1E reachable; per-CPU limits count CPU by CPU (one CPU without
// one keeps the global limit). The haltpoll governor halts at any limit
// above 0, so only 0, or a poll window that covers a round trip, ends it.
func TestCPUIdleUnderPMQoS(t *testing.T) {
	rs, err := Lookup("cpu-idle")
	if err != nil {
		t.Fatal(err)
	}
	i64 := func(v int64) *int64 { return &v }
	eval := func(fixture string, set func(q *inspect.IdleQoS)) Result {
		in := load(t, fixture)
		set(in.IdleQoS)
		return Evaluate(rs[0], in)
	}
	got := eval("calico-vxlan-jumbo", func(q *inspect.IdleQoS) { q.GlobalUS = i64(1) })
	if got.Status != NotApplicable || !strings.Contains(strings.Join(got.Why, ";"), "cpu_dma_latency 1 µs") {
		t.Errorf("menu under latency-performance: %s %q, want not applicable naming the limit", got.Status, got.Why)
	}
	got = eval("calico-vxlan-jumbo", func(q *inspect.IdleQoS) { q.GlobalUS = i64(10) })
	if got.Status != Candidate || got.Knobs[0].Params["keep_out_of"] != "C1 (2 µs), C1E (10 µs)" ||
		!strings.Contains(strings.Join(got.Why, ";"), "reachable: C1E 10 µs") {
		t.Errorf("menu at 10 µs: %s %q %v", got.Status, got.Why, got.Knobs)
	}
	allNA := func(q *inspect.IdleQoS) {
		q.ResumeUS = map[int]int64{}
		for c := range 16 {
			q.ResumeUS[c] = 0
		}
	}
	if got = eval("calico-vxlan-jumbo", allNA); got.Status != NotApplicable {
		t.Errorf("every CPU's own limit n/a: %s %q", got.Status, got.Why)
	}
	if got = eval("calico-vxlan-jumbo", func(q *inspect.IdleQoS) { allNA(q); delete(q.ResumeUS, 15) }); got.Status != Candidate {
		t.Errorf("CPU 15 without a limit of its own: %s %q", got.Status, got.Why)
	}
	// haltpoll: a limit of 1 µs does not stop it halting; 0 does; so does
	// a poll window of 200 µs.
	got = eval("this-machine", func(q *inspect.IdleQoS) { q.GlobalUS = i64(1) })
	if got.Status != Candidate || !strings.Contains(strings.Join(got.Why, ";"), "halts at any limit above 0") {
		t.Errorf("haltpoll at 1 µs: %s %q", got.Status, got.Why)
	}
	if got = eval("this-machine", func(q *inspect.IdleQoS) { q.GlobalUS = i64(0) }); got.Status != NotApplicable {
		t.Errorf("haltpoll at 0: %s %q", got.Status, got.Why)
	}
	if got = eval("this-machine", func(q *inspect.IdleQoS) { q.HaltPollNS = i64(200000) }); got.Status != NotApplicable {
		t.Errorf("haltpoll polling 200 µs first: %s %q", got.Status, got.Why)
	}
	// Without root /dev/cpu_dma_latency is not read: the rule cannot tell.
	in := load(t, "calico-vxlan-jumbo")
	in.IdleQoS.GlobalUS = nil
	in.Unknown = map[string]string{"cpu_dma_latency": "open /dev/cpu_dma_latency: permission denied"}
	if got := Evaluate(rs[0], in); got.Status != Unknown || !strings.Contains(got.Why[0], "permission denied") {
		t.Errorf("cpu_dma_latency unread: %s %q", got.Status, got.Why)
	}
}
