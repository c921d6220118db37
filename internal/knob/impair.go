package knob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// impairEntry applies the cell's network impairment (spec.impairments,
// a netem qdisc) on the device(s) spec.impairAt names, for one trial.
// The device's qdisc is journaled first (journal.Qdisc holding
// impair.Prev), so `cnibench cleanup` puts it back after a crash; the
// undo reverts exactly what impair.Apply recorded and marks it done.
var impairEntry = Entry{
	Name: "impairment",
	Changes: "netem qdisc (egress, or ingress through an ifb device) on the device spec.impairAt.where names: " +
		"the client or server node's tunnel device, the client node's underlay or the measured client pods' host-side veths; the cell's impairment",
	Scope:  Trial,
	Wanted: func(t *Target) bool { return Impairs(t.Impairment) },
	Needs: func(t *Target) []string {
		f := []string{probe.Netem}
		if t.Study != nil && t.Study.Spec.ImpairAt.Direction == study.DirIngress {
			f = append(f, probe.IFB)
		}
		return f
	},
	Apply: applyImpairment,
}

// Impairs reports whether an impairment puts a qdisc anywhere: not
// none, not unset, not ImpairsNothing. What a trial applies, what a
// study needs netem for and where the runner checks a datapath can take
// it are all this.
func Impairs(m study.Impairment) bool {
	return m.Name != "" && !m.IsNone() && !ImpairsNothing(m)
}

// ImpairsCells reports whether a cell the study measures, of datapath
// ("" for any), has an impairment that changes something (Impairs): the
// runner and the kube engine refuse an impairment place only where one
// would be applied.
func ImpairsCells(s *study.Study, datapath string) bool {
	for _, c := range s.Cells() {
		if c.Impairment == "" || datapath != "" && c.Datapath != datapath {
			continue
		}
		if m, ok := s.Impairment(c.Impairment); ok && Impairs(m) {
			return true
		}
	}
	return false
}

// PlaceFits says why a datapath (name) with or without a tunnel device,
// whose pods have no host-side devices for the reason noPeers ("": they
// have them, or it is not known), cannot take impairments at at
// (spec.impairAt); nil when it can. The runner asks it before the run of
// each datapath it can judge; impairDevices finds the same at a trial.
// The places it proposes impair the traffic at would (SameTraffic).
func PlaceFits(at study.ImpairAt, name string, tunnel bool, noPeers string) error {
	where := at.Where
	if where == "" {
		where = study.WhereClientTunnel // the default, as impairDevices takes it
	}
	switch {
	case (where == study.WhereClientTunnel || where == study.WhereServerTunnel) && !tunnel:
		places := []string{study.WhereUnderlay, study.WhereClientPods}
		if noPeers != "" {
			places = places[:1] // client-pods is refused below
		}
		return fmt.Errorf("datapath %s has no tunnel device for the impairments at spec.impairAt.where %s: "+
			"set impairAt.where to %s, or leave this datapath's impaired cells out with spec.only", name, where, SameTraffic(at, places...))
	case where == study.WhereClientPods && noPeers != "":
		return fmt.Errorf("datapath %s has no host-side pod devices for the impairments at spec.impairAt.where client-pods (%s): "+
			"set impairAt.where to %s, or leave this datapath's impaired cells out with spec.only", name, noPeers, SameTraffic(at, study.WhereUnderlay))
	}
	return nil
}

// SameTraffic names the places wheres, each with the direction at which
// its netem impairs the traffic at's does (study.ImpairAt.Carries): netem
// acts on one way alone, and a place proposed without its direction would
// impair the other (client-pods egress, the veths sending into the pods,
// acts on server->client traffic, the ACKs of a client's upload).
func SameTraffic(at study.ImpairAt, wheres ...string) string {
	want, dir := at.Carries(), at.Direction
	if dir == "" {
		dir = study.DirEgress
	}
	names := make([]string, len(wheres))
	for i, where := range wheres {
		d := dir
		if (study.ImpairAt{Where: where, Direction: d}).Carries() != want {
			d = otherDirection(d)
		}
		names[i] = where
		if d != dir {
			names[i] += " with direction: " + d
			if d == study.DirIngress {
				names[i] += " (through an ifb device: needs the ifb module)"
			}
		}
	}
	return strings.Join(names, ", or ") + ", for the same " + string(want) + " traffic"
}

func otherDirection(d string) string {
	if d == study.DirIngress {
		return study.DirEgress
	}
	return study.DirIngress
}

// ImpairsNothing: a study's own impairment whose every value is zero
// (`{name: loss-0, loss: 0%}`, the first step of a sweep) is the preset
// none, as impair.Apply takes a zero Spec: no qdisc, no netem needed,
// no impaired device for the qdisc collector to read (it read one that
// had no netem, and failed every trial). A definition that does not
// resolve is wanted, so that Apply reports its error.
func ImpairsNothing(m study.Impairment) bool {
	s, err := impair.Resolve(m.Name, m.Fields)
	return err == nil && s.IsZero()
}

// The local engine's qdisc operations, variables so that a test can
// stand in for the kernel.
var (
	netemApply        = impair.Apply
	netemApplyIngress = impair.ApplyIngress
	netemRevert       = impair.Revert
)

// impairDevices are the devices spec.impairAt.where names in this cell,
// and their node.
func impairDevices(t *Target) (engine.Node, []netns.Iface, error) {
	where := t.Study.Spec.ImpairAt.Where
	cli, srv := t.Cluster.Client(), t.Cluster.Server()
	switch where {
	case study.WhereClientTunnel, "":
		if d, ok := cli.Tunnel(); ok {
			return cli, []netns.Iface{d}, nil
		}
	case study.WhereServerTunnel:
		if d, ok := srv.Tunnel(); ok {
			return srv, []netns.Iface{d}, nil
		}
	case study.WhereUnderlay:
		return cli, []netns.Iface{cli.Underlay()}, nil
	case study.WhereClientPods:
		devs, err := cli.HostVeths(t.MeasuredClients)
		if err == nil {
			// Fewer devices than pods would impair some pods' traffic
			// (or none) and measure it as impaired.
			err = engine.OnePerPod(cli, t.MeasuredClients, devs, "impairAt client-pods")
		}
		return cli, devs, err
	default:
		return nil, nil, fmt.Errorf("unknown impairment device %q", where)
	}
	return nil, nil, PlaceFits(t.Study.Spec.ImpairAt, t.Datapath.Name, false, "")
}

func applyImpairment(_ context.Context, t *Target) (Undo, error) {
	name := t.Impairment.Name
	spec, err := impair.Resolve(t.Impairment.Name, t.Impairment.Fields)
	if err != nil {
		return nil, fmt.Errorf("impairment %s: %w", name, err)
	}
	node, devs, err := impairDevices(t)
	if err != nil {
		return nil, fmt.Errorf("impairment %s: %w", name, err)
	}
	ingress := t.Study.Spec.ImpairAt.Direction == study.DirIngress
	if t.Kernel != nil {
		if im, ok := t.Kernel(node).(engine.Impairer); ok {
			return impairThrough(im, t, node, devs, spec, ingress)
		}
	}
	apply := netemApply
	if ingress {
		apply = netemApplyIngress
	}
	type done struct {
		prev impair.Prev
		seq  int
	}
	var applied []done
	undo := func() error {
		var errs []error
		for i := len(applied) - 1; i >= 0; i-- {
			d := applied[i]
			if err := netemRevert(d.prev); err != nil {
				errs = append(errs, fmt.Errorf("revert impairment %s on %s: %w", name, d.prev.Dev, err))
				continue
			}
			if d.seq > 0 && t.Journal != nil {
				errs = append(errs, t.Journal.MarkDone(d.seq))
			}
		}
		return errors.Join(errs...)
	}
	for _, dev := range devs {
		seq := 0
		record := func(p impair.Prev) (err error) {
			if t.Journal != nil {
				seq, err = impair.Record(t.Journal, p)
			}
			return err
		}
		prev, err := apply(dev.Netns, dev.Name, spec, record)
		if seq > 0 || err == nil {
			// Recorded: whether or not the netem went in, the revert
			// is what undoes it (a no-op when nothing was installed).
			applied = append(applied, done{prev, seq})
		}
		if err != nil {
			return nil, failedApply(fmt.Errorf("impairment %s on %s: %w", name, dev.Name, err), undo)
		}
	}
	t.Impaired = engine.Impaired{Node: node}
	for _, d := range applied {
		t.Impaired.Devs = append(t.Impaired.Devs, netns.Iface{Netns: d.prev.Netns, Name: d.prev.Device()})
		t.Impaired.Netem = append(t.Impaired.Netem, d.prev.Installed(spec))
	}
	return undo, nil
}

// impairThrough impairs devs through the node's own kernel handle (the
// kube engine's agent), which journals each device's qdisc on the node.
func impairThrough(im engine.Impairer, t *Target, node engine.Node, devs []netns.Iface, spec impair.Spec, ingress bool) (Undo, error) {
	name := t.Impairment.Name
	var undos []func() error
	var undone []string // the devices of undos
	undo := func() error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			if err := undos[i](); err != nil {
				errs = append(errs, fmt.Errorf("revert impairment %s on %s of node %s: %w", name, undone[i], node.Name(), err))
			}
		}
		return errors.Join(errs...)
	}
	t.Impaired = engine.Impaired{Node: node}
	for _, dev := range devs {
		on, installed, u, err := im.Impair(dev, spec, ingress)
		if err != nil {
			return nil, failedApply(fmt.Errorf("impairment %s on %s of node %s: %w", name, dev.Name, node.Name(), err), undo)
		}
		undos, undone = append(undos, u), append(undone, dev.Name)
		t.Impaired.Devs = append(t.Impaired.Devs, on)
		t.Impaired.Netem = append(t.Impaired.Netem, installed)
	}
	return undo, nil
}
