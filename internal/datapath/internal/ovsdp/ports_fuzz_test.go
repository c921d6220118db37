package ovsdp

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParsePorts: `ovs-dpctl show` output names each port once per line;
// every parsed port has a name without spaces and a port number that
// appears, spelled exactly so, on a "port N: NAME" line (so a number too
// large to parse is never turned into 0 or another number); an input
// with such a line and no error parses it.
func FuzzParsePorts(f *testing.F) {
	f.Add("system@cnb:\n  lookups: hit:0 missed:0 lost:0\n  port 0: cnb (internal)\n  port 1: veth0\n  port 2: vxlan_sys_4789 (vxlan: packet_type=ptap)\n")
	f.Add("port 99999999999999999999: x\n")
	f.Add("port 1:\n")
	f.Add("port 007: y\n")
	f.Fuzz(func(t *testing.T, show string) {
		ports, err := ParsePorts(show)
		if err != nil {
			if ports != nil {
				t.Fatalf("ParsePorts(%q) = %v with error %v", show, ports, err)
			}
			return
		}
		for name, n := range ports {
			if name == "" || strings.ContainsAny(name, " \t\n") || n < 0 || n > 1<<32-1 {
				t.Fatalf("port %q = %d from %q", name, n, show)
			}
			if !hasPortLine(show, n, name) {
				t.Fatalf("port %q = %d does not appear in %q", name, n, show)
			}
		}
	})
}

// hasPortLine reports whether show has a line "port N: NAME" whose N,
// without leading zeros, is n spelled in decimal.
func hasPortLine(show string, n int, name string) bool {
	for _, l := range strings.Split(show, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimLeft(l, " \t\r\f"), "port ")
		if !ok {
			continue
		}
		i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if i <= 0 {
			continue
		}
		digits := strings.TrimLeft(rest[:i], "0")
		if digits == "" {
			digits = "0"
		}
		after, ok := strings.CutPrefix(rest[i:], ": "+name)
		if ok && digits == fmt.Sprint(n) && (after == "" || strings.ContainsAny(after[:1], " \t\r\f")) {
			return true
		}
	}
	return false
}
