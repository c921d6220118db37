package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// errOffPath is the failure of an impaired trial whose netem saw none
// of the traffic the workload moved: the cell would be labelled impaired
// and measure an unimpaired path.
var errOffPath = errors.New("the measured path does not cross the impaired device")

// trafficMetrics are the rates by which a workload that can run through
// an impairment says it moved traffic: iperf3's receiver bitrate (and
// pktgen's receiver's), sockperf's and qperf's transactions, ab's
// requests. A task (pod start-up) has none and is never judged.
var trafficMetrics = []string{results.MetricBitrate, results.MetricTransactions, results.MetricRequests}

// offPath fails an impaired trial whose netem qdisc(s) counted no packet,
// sent or dropped, over a measured window the collectors recorded in
// full while the workload moved traffic: the device spec.impairAt chose
// from what the engine knows of the path is off the path the traffic
// took (a routed path between nodes of one subnet, a misdetected CNI,
// the wrong side). Any packet through netem means the path crosses it,
// so the threshold is zero. Not judged: an unimpaired cell, a sample
// without the qdisc counters (no netem was installed), and a window the
// collectors recorded only in part (disturbed by the window rule: in a
// slow emulated guest collectors started after the window had ended read
// 0 to 124 packets), which the noise guard repeats instead.
func offPath(s results.Sample, imp engine.Impaired, g study.Noise) error {
	if s.Cell.Impairment == "" || s.Noise != nil && windowShort(*s.Noise, g) {
		return nil
	}
	sent, ok1 := s.Metrics[collect.MetricQdiscPackets]
	dropped, ok2 := s.Metrics[collect.MetricQdiscDrops]
	if !ok1 || !ok2 || sent+dropped > 0 {
		return nil
	}
	moved := ""
	for _, m := range trafficMetrics {
		if v := s.Metrics[m]; v > 0 {
			moved = fmt.Sprintf("%s %.4g", m, v)
			break
		}
	}
	if moved == "" {
		return nil
	}
	return fmt.Errorf("impairment %s: its netem on %s carried none of the trial's packets over the measured window "+
		"(qdisc_sent_packets and qdisc_dropped 0) while the workload moved traffic (%s): %w, and the cell would measure an unimpaired path as impaired. "+
		"Likely causes: a routed path between nodes of one subnet (Calico CrossSubnet, Flannel DirectRouting) that skips the tunnel, "+
		"spec.impairAt on the wrong side or direction, "+
		"or a sender that skips the device's qdisc (pktgen sending from it); "+
		"set spec.impairAt.where or .direction to a device the path crosses, or make the path cross it",
		s.Cell.Impairment, impairedDevs(imp), moved, errOffPath)
}

// impairedDevs names the impaired devices and their node.
func impairedDevs(imp engine.Impaired) string {
	names := make([]string, len(imp.Devs))
	for i, d := range imp.Devs {
		names[i] = d.Name
	}
	on := strings.Join(names, ", ")
	if on == "" {
		on = "its device"
	}
	if imp.Node != nil {
		on += " of node " + imp.Node.Name()
	}
	return on
}
