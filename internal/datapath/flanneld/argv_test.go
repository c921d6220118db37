package flanneld

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFlanneldWritesNoNetfilterRules: flanneld's command line turns off
// both of its netfilter writers (masquerade and, on by default, the
// FORWARD accepts), so a node's iptables state is the knob netfilter's
// alone, as with the in-process datapaths.
func TestFlanneldWritesNoNetfilterRules(t *testing.T) {
	argv := flanneldArgv("flanneld", "http://192.0.2.1:2379", "eth1", "/tmp/subnet.env")
	for _, want := range []string{"--ip-masq=false", "--iptables-forward-rules=false"} {
		if !slices.Contains(argv, want) {
			t.Errorf("flanneld runs as %q, without %s", argv, want)
		}
	}
}

// TestFlanneldKnowsItsFlags: every flag cnibench passes is one the
// installed flanneld defines (an unknown one makes it exit at start).
// Skipped when flanneld is not installed.
func TestFlanneldKnowsItsFlags(t *testing.T) {
	bin, err := FindFlanneld()
	if err != nil {
		t.Skip(err)
	}
	// flanneld prints its flags and exits on --help (flag.ExitOnError).
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	if !strings.Contains(string(out), "-etcd-endpoints") {
		t.Skipf("%s --help printed no flag list: %s", bin, out)
	}
	for _, a := range flanneldArgv(bin, "http://192.0.2.1:2379", "eth1", "/tmp/subnet.env")[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.Contains(string(out), "  -"+name+"\n") && !strings.Contains(string(out), "  -"+name+" ") {
			t.Errorf("%s defines no flag -%s", bin, name)
		}
	}
}
