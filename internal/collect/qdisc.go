package collect

import (
	"context"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// The impaired devices' netem counters over the window, summed over the
// devices: proof an impairment acted (a loss preset's drops, a delay's
// backlog shows in requeues and overlimits only when the queue fills).
const (
	MetricQdiscPackets    = "qdisc_sent_packets"
	MetricQdiscBytes      = "qdisc_sent_bytes"
	MetricQdiscDrops      = "qdisc_dropped"
	MetricQdiscRequeues   = "qdisc_requeues"
	MetricQdiscOverlimits = "qdisc_overlimits"
)

var qdiscEntry = Entry{
	Name: "qdisc",
	Description: "counters of cnibench's netem qdisc on each impaired device (sent packets and bytes, drops, requeues, overlimits; " +
		"tc -s qdisc show, read by the node's kernel: this one, or the node's agent on kube), over the window; only in impaired cells",
	Metrics: []string{MetricQdiscPackets, MetricQdiscBytes, MetricQdiscDrops, MetricQdiscRequeues, MetricQdiscOverlimits},
	Enabled: func(study.Workload) bool { return true },
	New: func(t Trial) (Collector, error) {
		c := &qdiscCollector{devs: t.Impaired.Devs}
		if len(c.devs) > 0 {
			c.k = t.Kernel(t.Impaired.Node)
		}
		return c, nil
	},
}

type qdiscCollector struct {
	k     engine.Kernel
	devs  []netns.Iface
	start []impair.Stats
}

func (c *qdiscCollector) read() ([]impair.Stats, error) {
	if len(c.devs) == 0 {
		return nil, nil
	}
	return c.k.Qdiscs(c.devs)
}

func (c *qdiscCollector) Start(context.Context) error {
	var err error
	c.start, err = c.read()
	return err
}

func (c *qdiscCollector) Stop(context.Context) (Result, error) {
	if len(c.devs) == 0 {
		return Result{}, nil
	}
	end, err := c.read()
	if err != nil {
		return Result{}, err
	}
	return Result{Metrics: qdiscDelta(c.start, end)}, nil
}

// qdiscDelta sums the counters' growth from start to end over devices.
// The counters wrap: Packets holds netlink's 32-bit gnet_stats_basic
// packets (TCA_STATS_BASIC; vishvananda/netlink reads no TCA_STATS_PKT64),
// so its growth is taken in 32 bits, as the drops' and the others' are
// by their type; bytes are 64-bit there.
func qdiscDelta(start, end []impair.Stats) map[string]float64 {
	m := map[string]float64{}
	for i := range end {
		a, b := start[i], end[i]
		m[MetricQdiscPackets] += float64(uint32(b.Packets) - uint32(a.Packets))
		m[MetricQdiscBytes] += float64(b.Bytes - a.Bytes)
		m[MetricQdiscDrops] += float64(b.Drops - a.Drops)
		m[MetricQdiscRequeues] += float64(b.Requeues - a.Requeues)
		m[MetricQdiscOverlimits] += float64(b.Overlimits - a.Overlimits)
	}
	return m
}
