package ovsdp

import "testing"

func TestParsePorts(t *testing.T) {
	show := `system@datapath:
  lookups: hit:0 missed:0 lost:0
  flows: 0
  masks: hit:0 total:0 hit/pkt:0.00
  port 0: datapath (internal)
  port 1: vethwe-datapath
  port 2: vxlan_sys_6784 (vxlan: packet_type=ptap)
`
	p, err := ParsePorts(show)
	if err != nil {
		t.Fatal(err)
	}
	if p["datapath"] != 0 || p["vethwe-datapath"] != 1 || p["vxlan_sys_6784"] != 2 || len(p) != 3 {
		t.Errorf("ParsePorts = %v", p)
	}
}

// A port number too large for a datapath port is an error, not port 0
// (the datapath's internal port).
func TestParsePortsTooLarge(t *testing.T) {
	for _, show := range []string{"port 99999999999999999999: x\n", "port 4294967296: x\n"} {
		if p, err := ParsePorts(show); err == nil {
			t.Errorf("ParsePorts(%q) = %v, want an error", show, p)
		}
	}
	if p, err := ParsePorts("port 4294967295: x\n"); err != nil || p["x"] != 4294967295 {
		t.Errorf("ParsePorts(max uint32) = %v, %v", p, err)
	}
}
