package datapath

import "time"

// Steps of wiring a pod, as the pod start-up breakdown names them (seed
// 004's Fig. 15a splits a CNI's network start-up into comparable steps:
// link up, IP allocation, endpoint creation). Datapaths mark the end of
// each step they take; the engine adds the namespace before them and
// whatever was not marked after them, so the steps sum to the total.
const (
	// StepLink creates the pod's device (veth pair, MACVLAN/IPVLAN
	// slave), moves it into the pod and sets it up.
	StepLink = "link"
	// StepPort joins the host side to the node's datapath: a bridge or
	// OVS port and its flows, proxy ARP, a BPF program and endpoint entry.
	StepPort = "port"
	// StepAddress gives the pod its address (IPAM: here a fixed address
	// per pod index, so this is the netlink call, not an allocation).
	StepAddress = "address"
	// StepRoutes programs the pod's and the node's routes and neighbours.
	StepRoutes = "routes"
)

// Step is one timed step of wiring a pod.
type Step struct {
	Name string
	Took time.Duration
}

// Steps times the steps of wiring one pod. Each Done closes the step
// that began at the previous Done (or at NewSteps); a name seen again
// adds to its first entry, so a step done in two pieces is one step. A
// nil *Steps records nothing, so datapaths mark steps unconditionally and
// callers that do not want the breakdown pass nil. One pod is wired by
// one goroutine, so Steps needs no lock.
type Steps struct {
	last time.Time
	list []Step
}

// NewSteps starts timing at now.
func NewSteps() *Steps { return &Steps{last: time.Now()} }

// Done ends the current step and names it.
func (s *Steps) Done(name string) {
	if s == nil {
		return
	}
	now := time.Now()
	took := now.Sub(s.last)
	s.last = now
	for i := range s.list {
		if s.list[i].Name == name {
			s.list[i].Took += took
			return
		}
	}
	s.list = append(s.list, Step{Name: name, Took: took})
}

// List returns the steps done so far, in the order first done.
func (s *Steps) List() []Step {
	if s == nil {
		return nil
	}
	return append([]Step(nil), s.list...)
}
