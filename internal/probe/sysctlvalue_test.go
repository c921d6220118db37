package probe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSysctlValue(t *testing.T) {
	// default_qdisc is global: where the tuning writes it does not matter.
	for _, inNetns := range []bool{false, true} {
		f := SysctlValue("net.core.default_qdisc", "fq", inNetns)
		if f != "sysctl:net.core.default_qdisc=fq" || !IsKernel(f) {
			t.Errorf("SysctlValue(default_qdisc, fq, %v) = %q", inNetns, f)
		}
		if name, value, in, ok := sysctlValueOf(f); !ok || name != "net.core.default_qdisc" || value != "fq" || in {
			t.Errorf("sysctlValueOf(%q) = %q %q %v %v", f, name, value, in, ok)
		}
	}
	// A congestion control written outside the host's namespace must
	// also be allowed there; its feature says so.
	for inNetns, want := range map[bool]string{false: "sysctl:net.ipv4.tcp_congestion_control=bbr", true: "sysctl:net.ipv4.tcp_congestion_control=bbr@netns"} {
		f := SysctlValue("net.ipv4.tcp_congestion_control", "bbr", inNetns)
		if f != want || !IsKernel(f) {
			t.Errorf("SysctlValue(congestion, bbr, %v) = %q, want %q", inNetns, f, want)
		}
		if name, value, in, ok := sysctlValueOf(f); !ok || name != "net.ipv4.tcp_congestion_control" || value != "bbr" || in != inNetns {
			t.Errorf("sysctlValueOf(%q) = %q %q %v %v", f, name, value, in, ok)
		}
	}
	if _, _, _, ok := sysctlValueOf("sysctl:net.core.default_qdisc=fq@netns"); ok {
		t.Error("a global sysctl's value taken with the namespace mark")
	}
	if f := SysctlValue("net.core.busy_read", "50", true); f != "" {
		t.Errorf("busy_read's value needs no module: %q", f)
	}
	for _, n := range []string{Sysctl("net.core.default_qdisc"), "sysctl:net.core.busy_read=50", Veth} {
		if _, ok := sysctlValueProbe(n); ok {
			t.Errorf("%s taken for a sysctl value's feature", n)
		}
	}
	if p, ok := sysctlValueProbe("sysctl:net.ipv4.tcp_congestion_control=bbr"); !ok || p.name != "sysctl:net.ipv4.tcp_congestion_control=bbr" {
		t.Errorf("congestion control's probe: %+v %v", p, ok)
	}
}

// Before Linux 4.15 (no per-namespace congestion control to write in the
// scratch namespace) the algorithm is looked for without writing: listed
// as available, or its module loadable.
func TestCongestionAvailable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tcp_available_congestion_control")
	if err := os.WriteFile(file, []byte("reno cubic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	never := func(m string) error { t.Errorf("modprobe -n %s asked for a listed algorithm", m); return nil }
	if ok, why := congestionAvailable("cubic", file, never); !ok {
		t.Errorf("cubic, listed: %s", why)
	}
	var asked string
	ok, why := congestionAvailable("bbr", file, func(m string) error { asked = m; return nil })
	if !ok || asked != "tcp_bbr" || !strings.Contains(why, "tcp_bbr is not loaded") {
		t.Errorf("bbr loadable: %v %q (asked %q)", ok, why, asked)
	}
	ok, why = congestionAvailable("bbr", file, func(string) error { return errors.New("modprobe -n tcp_bbr: exit status 1") })
	if !ok && strings.Contains(why, "no TCP congestion control bbr") && strings.Contains(why, "tcp_bbr") {
		return
	}
	t.Errorf("bbr missing: %v %q", ok, why)
}
