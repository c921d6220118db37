package results

import (
	"encoding/json"
	"testing"
)

// A core offline at the window's end is marked in samples.jsonl, and a
// run written before the mark reads as before: its offline core's zeros
// are recognised as no measurement all the same, a measured core's are
// not zeros.
func TestCoreStatMeasured(t *testing.T) {
	for _, c := range []struct {
		line     string
		measured bool
	}{
		{`{"cpu":1,"user":0,"nice":0,"system":0,"iowait":0,"irq":0,"softirq":0,"steal":0,"idle":0,"net_rx_softirqs_per_s":40}`, false},
		{`{"cpu":1,"user":0,"nice":0,"system":0,"iowait":0,"irq":0,"softirq":0,"steal":0,"idle":0,"offline":true}`, false},
		{`{"cpu":0,"user":10,"nice":0,"system":0,"iowait":0,"irq":0,"softirq":0,"steal":0,"idle":90}`, true},
		{`{"cpu":0,"idle":100}`, true},
	} {
		var cs CoreStat
		if err := json.Unmarshal([]byte(c.line), &cs); err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if cs.Measured() != c.measured {
			t.Errorf("%s: measured %v, want %v", c.line, cs.Measured(), c.measured)
		}
	}
	b, err := json.Marshal(CoreStat{CPU: 2, CPUPercent: CPUPercent{Idle: 100}})
	if err != nil || string(b) != `{"cpu":2,"user":0,"nice":0,"system":0,"iowait":0,"irq":0,"softirq":0,"steal":0,"idle":100,"net_rx_softirqs_per_s":0,"softnet_processed_per_s":0,"softnet_dropped_per_s":0,"softnet_time_squeeze_per_s":0,"softnet_received_rps_per_s":0}` {
		t.Errorf("an online core is written as before: %s (%v)", b, err)
	}
}
