package impair

import (
	"github.com/vishvananda/netlink"
)

// NetlinkAttrs returns the part of s that vishvananda/netlink's Netem
// models, in its units (µs, percent as float32, rate in bytes/s), for
// code that builds a netlink.Netem with netlink.NewNetem. It has no place
// for the distribution, the Gilbert-Elliott model or delays beyond
// 2^32-1 µs; Apply does not use it (it encodes everything itself,
// rounding probabilities as tc does, where NewNetem truncates), and the
// kernel tests use it to check netlink's own read-back of what Apply
// installed.
func (s Spec) NetlinkAttrs() netlink.NetemQdiscAttrs {
	s = s.normalized()
	return netlink.NetemQdiscAttrs{
		Latency:       uint32(min(s.Delay.Microseconds(), 1<<32-1)),
		DelayCorr:     float32(s.DelayCorrelation),
		Limit:         s.Limit,
		Loss:          float32(s.Loss),
		LossCorr:      float32(s.LossCorrelation),
		Gap:           s.Gap,
		Duplicate:     float32(s.Duplicate),
		DuplicateCorr: float32(s.DuplicateCorrelation),
		Jitter:        uint32(min(s.Jitter.Microseconds(), 1<<32-1)),
		ReorderProb:   float32(s.Reorder),
		ReorderCorr:   float32(s.ReorderCorrelation),
		CorruptProb:   float32(s.Corrupt),
		CorruptCorr:   float32(s.CorruptCorrelation),
		Rate64:        s.Rate / 8,
	}
}
