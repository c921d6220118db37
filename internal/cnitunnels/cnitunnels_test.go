package cnitunnels

import (
	"path"
	"slices"
	"strings"
	"testing"
)

// names are device names a line's pattern stands for: the pattern with
// its numbers and wildcards filled in a few ways (flannel.[0-9]* gives
// flannel.1 and flannel.4096).
func names(d Device) []string {
	var out []string
	for _, r := range []*strings.Replacer{
		strings.NewReplacer("[0-9]*", "1", "[0-9]", "1", "*", ""),
		strings.NewReplacer("[0-9]*", "4096", "[0-9]", "7", "*", "x"),
		strings.NewReplacer("[0-9]*", "0", "[0-9]", "0", "*", "6784"),
	} {
		if n := r.Replace(d.Pattern); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// meaning is what a line says of a device, its pattern aside.
func meaning(d Device) Device {
	d.Pattern = ""
	return d
}

// Every line describes itself: a valid pattern that its own names
// match, a known encapsulation, a mode only with a CNI, and a family
// with nothing but the encapsulation.
func TestLinesComplete(t *testing.T) {
	encaps := []string{"vxlan", "geneve", "ipip", "gre", "wireguard", "udp"}
	seen := map[string]bool{}
	for _, d := range List {
		if _, err := path.Match(d.Pattern, ""); err != nil || d.Pattern == "" || seen[d.Pattern] {
			t.Errorf("%q: pattern empty, listed twice or bad: %v", d.Pattern, err)
		}
		seen[d.Pattern] = true
		for _, n := range names(d) {
			if !d.Matches(n) {
				t.Errorf("%s does not match its own name %s", d.Pattern, n)
			}
		}
		if !slices.Contains(encaps, d.Encap) {
			t.Errorf("%s: encapsulation %q, want one of %v", d.Pattern, d.Encap, encaps)
		}
		if d.Mode != "" && d.CNI == "" {
			t.Errorf("%s: mode %q of no CNI", d.Pattern, d.Mode)
		}
		if d.Family && (d.CNI != "" || d.Datapath != "" || d.EveryNS) {
			t.Errorf("%s: a family says only its encapsulation: %+v", d.Pattern, d)
		}
	}
}

// No name matches two lines of different meanings, so neither the order
// of the table nor which reader asks changes what a name tells. A family
// is held to this among families alone (any other line wins over it),
// and must widen a line of its encapsulation (vxlan-* Weave's
// vxlan-6784), not name devices of its own.
func TestNoConflicts(t *testing.T) {
	for _, a := range List {
		widens := false
		for _, n := range names(a) {
			for _, b := range List {
				if !b.Matches(n) {
					continue
				}
				if a.Family == b.Family && meaning(a) != meaning(b) {
					t.Errorf("%s matches %s (%+v) and %s (%+v)", n, a.Pattern, meaning(a), b.Pattern, meaning(b))
				}
			}
		}
		for _, b := range List {
			for _, n := range names(b) {
				if a.Family && !b.Family && a.Matches(n) && a.Encap == b.Encap && a.IPv6 == b.IPv6 {
					widens = true
				}
			}
		}
		if a.Family && !widens {
			t.Errorf("family %s widens no line of its encapsulation", a.Pattern)
		}
	}
}

// A name tells the line that matches it, a family's only where no
// other does; a name of no line tells nothing.
func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name, encap string
		v6          bool
	}{
		{"flannel.ipip", "ipip", false},
		{"flannel.1", "vxlan", false},
		{"flannel.abc", "vxlan", false},
		{"vxlan-v6.calico", "vxlan", true},
		{"vxlan-8472", "vxlan", false},
		{"genev_sys_6081", "geneve", false},
		{"flannel0", "udp", false},
		{"gre0", "gre", false},
		{"eth0", "", false},
	} {
		d, ok := Lookup(tc.name)
		if d.Encap != tc.encap || d.IPv6 != tc.v6 || ok != (tc.encap != "") {
			t.Errorf("Lookup(%s) = %+v, %v; want %s (IPv6 %v)", tc.name, d, ok, tc.encap, tc.v6)
		}
	}
}

// First follows the table's order, then the links' names.
func TestFirst(t *testing.T) {
	flannel := func(d Device) bool { return d.CNI == "flannel" }
	if d, l, ok := First([]string{"flannel.ipip", "flannel.2", "flannel.1"}, flannel); !ok || l != "flannel.1" || d.Mode != "vxlan" {
		t.Errorf("First = %+v, %s, %v; want flannel.1 (vxlan)", d, l, ok)
	}
	if _, _, ok := First([]string{"eth0", "tunl0"}, flannel); ok {
		t.Error("First found a flannel device on a node without one")
	}
}

// The modules' fallbacks are plain names (callers read them as such, not
// as patterns): tunl0 and gre0 among them.
func TestFallbacks(t *testing.T) {
	f := Fallbacks()
	for _, n := range f {
		if strings.ContainsAny(n, "*?[") {
			t.Errorf("fallback %q is a pattern", n)
		}
	}
	if !slices.Contains(f, "tunl0") || !slices.Contains(f, "gre0") {
		t.Errorf("fallbacks %q lack tunl0 or gre0", f)
	}
}
