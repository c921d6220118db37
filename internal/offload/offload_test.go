package offload

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// Captured from ethtool 6.1 on this machine (kernel 6.18; see
// kernel_test.go).
func TestExplain(t *testing.T) {
	cases := map[string]string{
		"netlink error: bit name not found (offset 52)\nnetlink error: Operation not supported\n": "not a feature ethtool knows",
		"": "without a message",
		"netlink error: no device matches name (offset 24)\nnetlink error: No such device\n": "netlink error: no device matches name (offset 24) netlink error: No such device",
	}
	for in, want := range cases {
		if got := Explain([]byte(in), nil, nil); !strings.Contains(got, want) {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// ethtool says "Could not change any device features" whenever none of
// the requested bits took: for a feature fixed on the device, and for
// one the kernel turned back because it depends on another (GSO on a
// veth with scatter-gather off). Only `ethtool -k` read afterwards tells
// them apart: "[fixed]" against "[requested on]".
func TestExplainCouldNotChange(t *testing.T) {
	const couldNot = "Could not change any device features\n"
	for _, c := range []struct {
		name          string
		stdout, shown string
		want, notWant string
	}{
		{"fixed on a vxlan device",
			"Actual changes:\ntx-udp_tnl-segmentation: off [requested on]\n",
			"Features for vx0:\ntx-udp_tnl-segmentation: off [fixed]\ntx-udp_tnl-csum-segmentation: off [fixed]\n",
			"fixed on this device (ethtool -k: tx-udp_tnl-segmentation: off [fixed])", "kept"},
		{"gso without scatter-gather",
			"Actual changes:\ntx-generic-segmentation: off [requested on]\n",
			"Features for va:\nscatter-gather: off\n\ttx-scatter-gather: off\ngeneric-segmentation-offload: off [requested on]\nlarge-receive-offload: off [fixed]\n",
			"the kernel or driver kept it off (it may depend on another feature): tx-generic-segmentation: off [requested on]", "fixed"},
		{"tso: one sub-feature fixed, the others kept",
			"Actual changes:\ntx-tcp-segmentation: off [requested on]\ntx-tcp-ecn-segmentation: off [requested on]\n",
			"Features for va:\ntcp-segmentation-offload: off\n\ttx-tcp-segmentation: off [requested on]\n\ttx-tcp-ecn-segmentation: off [fixed]\n",
			"kept it off (it may depend on another feature): tx-tcp-segmentation: off [requested on]", "fixed"},
		{"turned back on",
			"Actual changes:\nrx-vlan-hw-parse: on [requested off]\n",
			"rx-vlan-offload: on\n",
			"kept it on (it may depend on another feature): rx-vlan-hw-parse: on [requested off]", "fixed"},
		{"-k not read",
			"Actual changes:\nloopback: off [requested on]\n", "",
			"ethtool could not change it: loopback: off [requested on]", "fixed"},
		{"no changes listed", "", "",
			"ethtool could not change it", "fixed"},
	} {
		var shown []byte
		if c.shown != "" {
			shown = []byte(c.shown)
		}
		got := Explain([]byte(couldNot), []byte(c.stdout), shown)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.notWant) {
			t.Errorf("%s: got %q, want %q without %q", c.name, got, c.want, c.notWant)
		}
	}
}

func FuzzExplain(f *testing.F) {
	f.Add([]byte("Could not change any device features\n"), []byte("Actual changes:\nhw-tc-offload: off [requested on]\n"), []byte("hw-tc-offload: off [fixed]\n"))
	f.Add([]byte("Could not change any device features\n"), []byte("Actual changes:\ntx-generic-segmentation: off [requested on]\n"), []byte(nil))
	f.Add([]byte("netlink error: bit name not found (offset 52)\n"), []byte(nil), []byte(nil))
	f.Fuzz(func(t *testing.T, stderr, stdout, shown []byte) {
		if got := Explain(stderr, stdout, shown); strings.Contains(got, "\n") || got == "" {
			t.Errorf("Explain(%q, %q, %q) = %q: want one non-empty line", stderr, stdout, shown, got)
		}
	})
}

// scripted answers each program by its argv's second word (-K or -k).
type scripted map[string]string

type done struct{ out string }

func (d done) Wait() ([]byte, []byte, error) { return []byte(d.out), nil, nil }
func (done) Stop()                           {}

func (s scripted) Start(_ context.Context, argv []string) (engine.Process, error) {
	return done{s[argv[1]]}, nil
}

// ethtool -K exits 0 whenever any bit changed, or none was asked to: TSO
// asked on with checksumming off prints its bits "[requested on]" and
// exits 0 (ethtool 6.1, kernel 6.18, a veth). Set must refuse that, but
// not a group whose only untaken bits are fixed (tx-checksumming on, where
// tx-checksum-ipv4 is fixed off on a veth).
func TestSetRefusesKeptBitsAfterExitZero(t *testing.T) {
	ctx := context.Background()
	tso := scripted{
		"-K": "Actual changes:\ntx-tcp-segmentation: off [requested on]\ntx-tcp6-segmentation: off [requested on]\n",
		"-k": "Features for va:\ntcp-segmentation-offload: off\n\ttx-tcp-segmentation: off\n\ttx-tcp6-segmentation: off\n",
	}
	err := Set(ctx, tso, "va", "tso", true)
	if err == nil || !strings.Contains(err.Error(), "kept it off") || !strings.Contains(err.Error(), "tx-tcp6-segmentation: off [requested on]") {
		t.Errorf("tso kept off: %v; want refused, quoting ethtool", err)
	}
	tx := scripted{
		"-K": "Actual changes:\ntx-checksum-ipv4: off [requested on]\ntx-checksum-ip-generic: on\ntx-tcp-segmentation: on [not requested]\n",
		"-k": "Features for va:\ntx-checksumming: on\n\ttx-checksum-ipv4: off [fixed]\n\ttx-checksum-ip-generic: on\n",
	}
	if err := Set(ctx, tx, "va", "tx-checksumming", true); err != nil {
		t.Errorf("a group whose untaken bit is fixed: %v", err)
	}
	if err := Set(ctx, scripted{}, "va", "tso", true); err != nil {
		t.Errorf("ethtool silent and exit 0: %v", err)
	}
}
