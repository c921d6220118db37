package local

import (
	"testing"

	"github.com/cnibench/cnibench/internal/wire"
)

// A pod's host-side device is named from its name within its node, not
// from its namespace's name, which carries the run's ID: Calico's
// dispatch chains follow the devices' hex prefixes, so with names that
// changed every run its Table III chain and rule counts moved by one to
// four between runs of one study. Two runs' srv0 get one name; srv0 and
// srv1 of one run still get two.
func TestHostVethNameSameInEveryRun(t *testing.T) {
	name := func(run, pod string) string {
		c := &Cluster{}
		c.cfg.RunID = run
		p := &Pod{name: pod, ns: c.nsName(pod)}
		return wire.HostVethName("cali", p.datapathPod(nil).HostKey())
	}
	if a, b := name("r1", "srv0"), name("r2", "srv0"); a != b {
		t.Errorf("srv0 is %s in run r1 and %s in run r2", a, b)
	}
	if a, b := name("r1", "srv0"), name("r1", "srv1"); a == b {
		t.Errorf("srv0 and srv1 share the name %s", a)
	}
}
