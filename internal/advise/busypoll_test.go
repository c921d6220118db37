package advise

import (
	"strings"
	"testing"
)

// busy-poll's 50 µs is the sysctl document's recommendation
// (admin-guide/sysctl/net.rst), cited as such, not napi.rst's; its CPU
// floor says it is cnibench's heuristic.
func TestBusyPollCitesTheValue(t *testing.T) {
	rs, err := Lookup("busy-poll")
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	cited := false
	for _, e := range r.Evidence {
		if strings.Contains(e.Source, "admin-guide/sysctl/net.rst") && strings.Contains(e.Finding, "a value of 50 is recommended") {
			cited = true
		}
		if strings.Contains(e.Source, "napi.rst") && strings.Contains(e.Finding, "50") {
			t.Errorf("napi.rst cited for the value 50: %s", e.Finding)
		}
	}
	if !cited {
		t.Errorf("the value 50 is not cited from admin-guide/sysctl/net.rst: %+v", r.Evidence)
	}
	if !strings.Contains(r.Risk, "4 CPUs (cnibench's heuristic)") {
		t.Errorf("the CPU floor is not explained: %s", r.Risk)
	}
}
