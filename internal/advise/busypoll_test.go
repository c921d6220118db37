package advise

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
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

// The summary says a busy-polling sysctl it could not read is unknown,
// not 0 us.
func TestSummaryBusyPollingUnread(t *testing.T) {
	in := load(t, "kind-node-veth-underlay")
	in.Sysctls[inspect.SysBusyPoll] = 50
	delete(in.Sysctls, inspect.SysBusyRead)
	if !slices.Contains(Summarize(in), Finding{"busy polling", "busy_read unknown, busy_poll 50 us"}) {
		t.Errorf("summary %v, want busy_read unknown beside busy_poll 50 us", Summarize(in))
	}
}
