package advise

import (
	"path"
	"strings"
	"testing"
)

// udevMatches is what udev does with a rule's quoted value and a
// device's name (udev-rules.c): the value's \" become quotes and nothing
// else is unescaped; "|" splits alternatives; a value holding *, ? or [
// is matched with fnmatch (flags 0: backslash escapes, as path.Match
// takes them), any other compared as it is.
func udevMatches(t *testing.T, ruleText, name string) bool {
	t.Helper()
	value := strings.ReplaceAll(ruleText, `\"`, `"`)
	glob := strings.ContainsAny(value, "*?[")
	for _, alt := range strings.Split(value, "|") {
		if !glob {
			if alt == name {
				return true
			}
			continue
		}
		ok, err := path.Match(alt, name)
		if err != nil {
			t.Fatalf("%q: %v", alt, err)
		}
		if ok {
			return true
		}
	}
	return false
}

// The udev rules put the interface's name into NAME==/KERNEL== as it
// was: a name with *, ? or [ made the rule a glob matching other
// devices too (eth* any ethN), a backslash before the closing quote
// swallowed it. The value now matches exactly the names it is for; what
// udev cannot match exactly (| splits alternatives, quotes end the value
// and are stripped from RUN's command) gets no rule.
func TestUdevMatchEscapes(t *testing.T) {
	for _, c := range []struct {
		names    []string
		want     string
		notMatch []string
	}{
		{[]string{"eth0"}, "eth0", []string{"eth1", "eth00"}},
		{[]string{"eth0", "eth1"}, "eth0|eth1", []string{"eth2"}},
		{[]string{"eth*"}, `eth\*`, []string{"eth0", "eth"}},
		{[]string{"eth0", "e?[1]"}, `eth0|e\?\[1]`, []string{"ex1", "e?1"}},
		{[]string{`a\b`}, `a[\\]b`, []string{"ab", `a\\b`}},
		{[]string{`tail\`}, `tail[\\]`, []string{"tail"}},
		{[]string{"x;$(id)%k"}, "x;$(id)%k", []string{"x;"}},
	} {
		got, err := udevMatch(c.names)
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.names, got, err, c.want)
			continue
		}
		// What udev's parser would do with NAME=="<got>": the value must
		// end at the closing quote, and match each name and no other.
		if strings.HasSuffix(got, `\`) {
			t.Errorf("%q: %q ends in a backslash, which escapes the closing quote", c.names, got)
		}
		for _, n := range c.names {
			if !udevMatches(t, got, n) {
				t.Errorf("%q does not match %q", got, n)
			}
		}
		for _, n := range c.notMatch {
			if udevMatches(t, got, n) {
				t.Errorf("%q matches %q too", got, n)
			}
		}
	}
	for _, bad := range []string{"a|b", `a"b`, "a'b", "", "a/b", "a:1", "a b", "sixteen-bytes-xx"} {
		if got, err := udevMatch([]string{"eth0", bad}); err == nil {
			t.Errorf("%q: %q, want an error", bad, got)
		}
	}
	if got := udevShellWord("a$b%c`d\\"); got != `\"a\$$b%%c\`+"`"+`d\\\"` {
		t.Errorf("shell word: %s", got)
	}
}

// rfs and nic-gro on a NIC whose name holds shell syntax and a glob
// character: the match is escaped, and rfs's shell script takes the name
// as $1, never in its text (there, "x;$(reboot)" would have run reboot);
// a quote in the name gives no rule, and says why.
func TestUdevRulesQuoteTheName(t *testing.T) {
	rs, err := Lookup("rfs", "nic-gro")
	if err != nil {
		t.Fatal(err)
	}
	name := "x;$(reboot)*"
	for i, r := range rs {
		in := load(t, []string{"calico-vxlan-jumbo", "flannel-nic-no-offload"}[i])
		in.NICs[0].Name, in.Underlay = name, name
		got := Evaluate(r, in)
		if got.Status != Candidate {
			t.Fatalf("%s: %s %q", r.Name, got.Status, got.Why)
		}
		for _, p := range got.Permanent {
			if p.Kind != "udev" {
				continue
			}
			for _, l := range strings.Split(p.Text, "\n") {
				if strings.HasPrefix(l, "#") || l == "" {
					continue
				}
				match, run, _ := strings.Cut(l, "RUN+=")
				if !strings.Contains(match, `=="x;$(reboot)\*"`) {
					t.Errorf("%s: match not escaped: %s", r.Name, l)
				}
				if r.Name == "rfs" && (!strings.Contains(run, `cd /sys/class/net/\"$$1\"/queues`) || !strings.HasSuffix(run, `' sh $name"`)) {
					t.Errorf("rfs: the script does not take the name as $1: %s", l)
				}
				if strings.Contains(run, "reboot") {
					t.Errorf("%s: the name is in RUN's text: %s", r.Name, l)
				}
			}
		}
	}
	// A quote, or a "|" that {nic}'s own "|" join would have split into
	// two names udev then matched both of.
	for _, bad := range []string{`a"b`, "eth0|eth1"} {
		in := load(t, "flannel-nic-no-offload")
		in.NICs[0].Name, in.Underlay = bad, bad
		if got := Evaluate(rs[1], in); got.Status != Unknown || !strings.Contains(strings.Join(got.Why, " "), "cannot match a name holding | or a quote") {
			t.Errorf("%q in the name: %s %q", bad, got.Status, got.Why)
		}
	}
}

// tunnel-gro keeps KERNEL== and %k in a file before 80-net-setup-link:
// a CNI agent names its tunnel and systemd's default NamePolicy keeps a
// name user space gave, so the kernel's name is the name. The match is
// escaped as the NIC rules' are.
func TestTunnelGROMatchesKernelName(t *testing.T) {
	rs, err := Lookup("tunnel-gro")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "calico-vxlan-jumbo")
	primaryTunnel(in).Name = "vxlan[1]"
	got := Evaluate(rs[0], in)
	if got.Status != Candidate || len(got.Permanent) != 1 {
		t.Fatalf("%s %q", got.Status, got.Why)
	}
	p := got.Permanent[0]
	if base := path.Base(p.Path); base >= "80-net-setup-link.rules" {
		t.Errorf("%s comes after 80-net-setup-link.rules", p.Path)
	}
	if !strings.Contains(p.Text, `SUBSYSTEM=="net", KERNEL=="vxlan\[1]", RUN+="/usr/sbin/ethtool -K %k gro on"`) || strings.Contains(p.Text, "\nACTION==\"add\", SUBSYSTEM==\"net\", NAME==") {
		t.Errorf("rule:\n%s", p.Text)
	}
}
