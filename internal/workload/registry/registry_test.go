package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload"
)

func TestLookup(t *testing.T) {
	d, err := Lookup("iperf3")
	if err != nil || d.Tool() != "iperf3" {
		t.Fatalf("Lookup(iperf3) = %v, %v", d, err)
	}
	_, err = Lookup("netperf")
	if !errors.Is(err, workload.ErrUnknownTool) || !strings.Contains(err.Error(), "known: ") || !strings.Contains(err.Error(), "iperf3") {
		t.Errorf("Lookup(netperf) error = %v", err)
	}
}

func TestToolsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Drivers() {
		if seen[d.Tool()] {
			t.Errorf("tool %s registered twice", d.Tool())
		}
		seen[d.Tool()] = true
		if len(d.Protocols()) == 0 {
			t.Errorf("tool %s lists no protocol", d.Tool())
		}
	}
	if !slices.Equal(Tools()["iperf3"], []string{"tcp", "udp"}) {
		t.Errorf("Tools() = %v", Tools())
	}
}
