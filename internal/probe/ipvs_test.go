package probe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIPVSProbeUnloadedModule: before Linux 5.16 looking the IPVS family
// up does not load ip_vs, so on such a kernel with ip_vs there but not
// loaded the probe said "kernel lacks the ip_vs module" and refused
// kubeProxy: ipvs, which would have run (the IPVS library runs modprobe
// ip_vs). modprobe's dry run now tells the two apart.
func TestIPVSProbeUnloadedModule(t *testing.T) {
	noFamily := func() error { return fmt.Errorf("genl ctrl get: %w", unix.ENOENT) }
	var asked []string
	ok, detail := ipvsProbe(noFamily, func(m string) error { asked = append(asked, m); return nil })
	if !ok || !strings.Contains(detail, "not loaded") || !strings.Contains(detail, "modprobe ip_vs") {
		t.Errorf("ip_vs loadable but not loaded: %v %q, want available with a note", ok, detail)
	}
	if len(asked) != 1 || asked[0] != "ip_vs" {
		t.Errorf("modprobe's dry run asked for %v, want [ip_vs]", asked)
	}
	ok, detail = ipvsProbe(noFamily, func(string) error { return errors.New("modprobe -n ip_vs: exit status 1") })
	if ok || !strings.Contains(detail, "no ip_vs module to load") || !strings.Contains(detail, "CONFIG_IP_VS") {
		t.Errorf("no ip_vs at all: %v %q", ok, detail)
	}
	if ok, _ := ipvsProbe(func() error { return nil }, func(string) error { t.Error("dry run asked though the family is there"); return nil }); !ok {
		t.Error("family present: not ok")
	}
	if ok, detail := ipvsProbe(func() error { return unix.EPERM }, func(string) error { return nil }); ok || !strings.Contains(detail, "privilege") {
		t.Errorf("EPERM: %v %q", ok, detail)
	}
}
