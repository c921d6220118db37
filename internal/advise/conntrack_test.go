package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// conntrack-size raises the hash buckets with the maximum (the kernel's
// default ratio, nf_conntrack-sysctl.rst: max equals buckets, a full
// table's chains 2 long), never lowers them, and on Kubernetes says the
// value is kube-proxy's to set (conntrack.maxPerCore, per CPU). The
// kernel's log line is quoted from the kernel's source, not from the
// sysctl document, which does not hold it.
func TestConntrackSize(t *testing.T) {
	rs, err := Lookup("conntrack-size")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "calico-vxlan-jumbo") // max 262144, 262144 buckets, 16 CPUs
	got := Evaluate(rs[0], in)
	if k := knobText(got.Knobs); got.Status != Candidate || k != "conntrack: nf_conntrack_buckets=524288, nf_conntrack_max=524288" {
		t.Fatalf("%s %s", got.Status, k)
	}
	var perm []string
	for _, p := range got.Permanent {
		perm = append(perm, p.Kind+": "+p.Text)
	}
	all := strings.Join(perm, "\n")
	for _, want := range []string{"maxPerCore: 32768", "net.netfilter.nf_conntrack_buckets = 524288", "modprobe.d: ", "options nf_conntrack hashsize=524288"} {
		if !strings.Contains(all, want) {
			t.Errorf("permanent forms lack %q:\n%s", want, all)
		}
	}
	if !strings.Contains(got.Effect, "(now 262144)") {
		t.Errorf("effect does not say the buckets now: %s", got.Effect)
	}
	in.Sysctls[inspect.SysConntrackBuckets] = 1 << 20
	if k := knobText(Evaluate(rs[0], in).Knobs); k != "conntrack: nf_conntrack_buckets=1048576, nf_conntrack_max=524288" {
		t.Errorf("more buckets than the new maximum are kept: %s", k)
	}
	for _, e := range rs[0].Evidence {
		if strings.Contains(e.Source, "nf_conntrack-sysctl.rst") && strings.Contains(e.Finding, "table full") {
			t.Errorf("the sysctl document is cited for the kernel's log message: %s", e.Finding)
		}
	}
}

// nf_conntrack_max in sysctl.d is applied at boot only if nf_conntrack
// is loaded when systemd-sysctl runs, which nothing made sure of: the
// permanent forms now load it from modules-load.d, ahead of the sysctl.d
// file, and say why.
func TestConntrackSizeLoadsTheModule(t *testing.T) {
	rs, err := Lookup("conntrack-size")
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(rs[0], load(t, "calico-vxlan-jumbo"))
	mod, sysctl := -1, -1
	for i, p := range got.Permanent {
		switch p.Kind {
		case "modules-load.d":
			mod = i
			if !strings.HasPrefix(p.Path, "/etc/modules-load.d/") || !strings.HasSuffix(strings.TrimSpace(p.Text), "\nnf_conntrack") || !strings.Contains(p.Text, "never applied at boot") {
				t.Errorf("modules-load.d: %s\n%s", p.Path, p.Text)
			}
		case "sysctl.d":
			sysctl = i
		}
	}
	if mod < 0 || mod > sysctl {
		t.Errorf("no modules-load.d form before the sysctl.d one: %+v", got.Permanent)
	}
}

// Without nf_conntrack there is no table to fill: conntrack-size does not
// apply, rather than being unknown; an unreadable table stays unknown.
func TestConntrackNotLoaded(t *testing.T) {
	rs, err := Lookup("conntrack-size")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ why, want string }{{inspect.NoConntrack, NotApplicable}, {"permission denied", Unknown}} {
		in := load(t, "calico-vxlan-jumbo")
		delete(in.Sysctls, inspect.SysConntrackMax)
		delete(in.Sysctls, inspect.SysConntrackCount)
		in.Unknown = map[string]string{"sysctl " + inspect.SysConntrackMax: c.why, "sysctl " + inspect.SysConntrackCount: c.why}
		if got := Evaluate(rs[0], in); got.Status != c.want {
			t.Errorf("conntrack sysctls %q: %s (%q), want %s", c.why, got.Status, got.Why, c.want)
		}
	}
}
