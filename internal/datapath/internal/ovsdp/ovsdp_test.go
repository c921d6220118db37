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
	p := ParsePorts(show)
	if p["datapath"] != 0 || p["vethwe-datapath"] != 1 || p["vxlan_sys_6784"] != 2 || len(p) != 3 {
		t.Errorf("ParsePorts = %v", p)
	}
}
