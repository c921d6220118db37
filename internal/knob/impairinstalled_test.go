package knob

import (
	"context"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/study"
)

// TestImpairedSaysWhatWasInstalled: the trial's Impaired holds, per
// device, the netem as installed, with the queue limit Apply set under
// the link-rate shaper (impair.Prev.Limit) or tc's default, which env.json
// records; before, only the devices were known.
func TestImpairedSaysWhatWasInstalled(t *testing.T) {
	apply, revert := netemApply, netemRevert
	defer func() { netemApply, netemRevert = apply, revert }()
	netemRevert = func(impair.Prev) error { return nil }
	netemApply = func(ns, dev string, _ impair.Spec, _ func(impair.Prev) error) (impair.Prev, error) {
		if dev == "eth0" { // the underlay, under tbf
			return impair.Prev{Netns: ns, Dev: dev, Kind: "tbf", Child: &impair.Child{Kind: "bfifo", Limit: 3_000_000}, Limit: 2891}, nil
		}
		return impair.Prev{Netns: ns, Dev: dev, Kind: "noqueue", Default: true}, nil
	}
	cli, srv := &fakeNode{name: "c", ns: "cnb-c"}, &fakeNode{name: "s", ns: "cnb-s"}
	for _, c := range []struct {
		where, dev, want string
	}{
		{study.WhereUnderlay, "eth0", "delay 10ms 1ms 25% limit 2891"},
		{study.WhereClientTunnel, "flannel.1", "delay 10ms 1ms 25% limit 1000"},
	} {
		s := &study.Study{}
		s.Spec.ImpairAt = study.ImpairAt{Where: c.where, Direction: study.DirEgress}
		tg := &Target{Study: s, Cluster: fakeCluster{srv, cli}, Impairment: study.Impairment{Name: "delay-low"},
			Kernel: func(engine.Node) engine.Kernel { return nil }}
		undo, err := applyImpairment(context.Background(), tg)
		if err != nil {
			t.Fatal(err)
		}
		if err := undo(); err != nil {
			t.Fatal(err)
		}
		if len(tg.Impaired.Devs) != 1 || tg.Impaired.Devs[0].Name != c.dev ||
			len(tg.Impaired.Netem) != 1 || tg.Impaired.Netem[0].String() != c.want {
			t.Errorf("%s: impaired %v with %v, want %s with %s", c.where, tg.Impaired.Devs, tg.Impaired.Netem, c.dev, c.want)
		}
	}
}
