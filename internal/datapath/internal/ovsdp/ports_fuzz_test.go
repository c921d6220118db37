package ovsdp

import (
	"strings"
	"testing"
)

// FuzzParsePorts: `ovs-dpctl show` output names each port once per line;
// every parsed port has a name without spaces and a port number that
// appears on a "port N: NAME" line.
func FuzzParsePorts(f *testing.F) {
	f.Add("system@cnb:\n  lookups: hit:0 missed:0 lost:0\n  port 0: cnb (internal)\n  port 1: veth0\n  port 2: vxlan_sys_4789 (vxlan: packet_type=ptap)\n")
	f.Add("port 99999999999999999999: x\n")
	f.Add("port 1:\n")
	f.Fuzz(func(t *testing.T, show string) {
		for name, n := range ParsePorts(show) {
			if name == "" || strings.ContainsAny(name, " \t\n") || n < 0 {
				t.Fatalf("port %q = %d from %q", name, n, show)
			}
		}
	})
}
