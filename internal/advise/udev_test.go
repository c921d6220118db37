package advise

import (
	"path"
	"regexp"
	"strings"
	"testing"
)

// udevSubst is what udev takes for a substitution in a rule's value:
// "$$" is a literal "$", "$name" the device's name after renaming.
var udevSubst = regexp.MustCompile(`\$(\$|name\b|kernel\b|[a-z]+)`)

// The udev rules of rfs and nic-gro matched KERNEL=="<current name>" in a
// file numbered 60/61: a NIC renamed by 80-net-setup-link.rules (eth0 to
// ens3) is eth0 to KERNEL== on its add event, so the rule never ran. And
// rfs's RUN held the shell's $q, which udev takes for a substitution of
// its own ("invalid substitution type"). The rules now come after 80,
// match NAME== (or the kernel's name where no rule renamed the device),
// use $name for the device and $$q for the shell.
func TestUdevRulesSurviveRenames(t *testing.T) {
	seen := map[string]bool{}
	for _, fixture := range []string{"calico-vxlan-jumbo", "flannel-nic-no-offload", "this-machine", "multiqueue-rss-one-cpu", "ipip-nic-vxlan-offload"} {
		in := load(t, fixture)
		for _, name := range []string{"rfs", "nic-gro"} {
			rs, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			got := Evaluate(rs[0], in)
			for _, p := range got.Permanent {
				if p.Kind != "udev" {
					continue
				}
				seen[name] = true
				if base := path.Base(p.Path); base <= "80-net-setup-link.rules" {
					t.Errorf("%s: %s runs before 80-net-setup-link.rules renames the NIC", name, p.Path)
				}
				checkUdevLines(t, name+" on "+fixture, p.Text)
			}
		}
	}
	if !seen["rfs"] || !seen["nic-gro"] {
		t.Fatalf("no fixture made a udev rule of each: %v", seen)
	}
}

func checkUdevLines(t *testing.T, what, text string) {
	t.Helper()
	renamed, kept := false, false
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.Contains(l, "%k") {
			t.Errorf("%s: %%k is the kernel's name before renaming: %s", what, l)
		}
		for _, m := range udevSubst.FindAllStringSubmatch(l, -1) {
			if m[1] != "$" && m[1] != "name" {
				t.Errorf("%s: udev would substitute $%s: %s", what, m[1], l)
			}
		}
		renamed = renamed || strings.Contains(l, `NAME=="`) && !strings.Contains(l, `NAME==""`)
		kept = kept || strings.Contains(l, `NAME=="", KERNEL=="`)
	}
	if !renamed || !kept {
		t.Errorf("%s: want a line for a renamed NIC (NAME==) and one for a kept name (NAME==\"\", KERNEL==):\n%s", what, text)
	}
}
