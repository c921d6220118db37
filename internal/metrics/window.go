package metrics

import (
	"slices"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/procstat"
	"github.com/cnibench/cnibench/internal/results"
)

// Window is what a Sampler recorded between Start and Stop.
type Window struct {
	// Start and End are the times of the first and the last reading.
	Start, End time.Time
	// Points holds one entry per sampling interval.
	Points []PerSecond
	// Cores holds the averages over the whole window of every CPU that was
	// online at some point of it, in ascending CPU order. Node is left
	// empty for the caller to fill. A CPU offline at the end has zero
	// percentages, as mpstat prints an offline CPU, is marked so
	// (CoreStat.Offline: the stored samples carry the mark, so the
	// analysis leaves its percentages out) and is listed in
	// Offline; one that came online
	// during the window is averaged from its first reading. Rates are
	// per second of the whole window.
	Cores []results.CoreStat
	// Offline lists the CPUs of Cores that were offline at the end, in
	// ascending order: their zero percentages are no measurement, and a
	// mean over cores (100 - idle, steal) must leave them out (Online).
	Offline []int `json:",omitempty"`
}

// Online returns the cores online at the window's end: Cores without
// those in Offline.
func (w Window) Online() []results.CoreStat {
	if len(w.Offline) == 0 {
		return w.Cores
	}
	out := make([]results.CoreStat, 0, len(w.Cores))
	for _, c := range w.Cores {
		if !slices.Contains(w.Offline, c.CPU) {
			out = append(out, c)
		}
	}
	return out
}

// PerSecond is the CPU time split of each core over one interval.
type PerSecond struct {
	// Time is the end of the interval.
	Time time.Time
	// Cores lists the CPUs online at both ends of the interval.
	Cores []CorePercent
}

// CorePercent is one core's CPU time split over an interval.
type CorePercent struct {
	CPU int
	results.CPUPercent
}

// window builds the result from the readings taken so far.
func (rec *recorder) window() Window {
	w := Window{Start: rec.firstTime, End: rec.prevTime}
	// Copy: the Sampler reuses its storage for the next window.
	cores := slices.Clone(rec.cores)
	w.Points = make([]PerSecond, len(rec.points))
	for i, p := range rec.points {
		w.Points[i] = PerSecond{Time: p.time, Cores: cores[p.start:p.end:p.end]}
	}
	secs := elapsed(w.Start, w.End)
	rate := func(c *counter, cpu int) float64 {
		if secs == 0 {
			return 0
		}
		return float64(c.sum(cpu)) / secs
	}
	for cpu, ok := range rec.seen {
		if !ok {
			continue
		}
		cs := results.CoreStat{
			CPU:               cpu,
			NetRxPerSec:       rate(&rec.netRx, cpu),
			ProcessedPerSec:   rate(&rec.processed, cpu),
			DroppedPerSec:     rate(&rec.dropped, cpu),
			SqueezedPerSec:    rate(&rec.squeezed, cpu),
			ReceivedRPSPerSec: rate(&rec.receivedRP, cpu),
		}
		if last, online := rec.prev.Lookup(cpu); online {
			cs.CPUPercent = procstat.Percent(rec.first[cpu], last)
			cs.Poll = pollPercent(rec.pollFirst, rec.pollLast, cpu, secs)
		} else {
			cs.Offline = true
			w.Offline = append(w.Offline, cpu)
		}
		w.Cores = append(w.Cores, cs)
	}
	return w
}

// CPUPoints flattens the window's intervals into cpu.jsonl lines for one
// trial of one cell.
func (w Window) CPUPoints(cell results.Cell, trial int) []results.CPUPoint {
	n := 0
	for _, p := range w.Points {
		n += len(p.Cores)
	}
	out := make([]results.CPUPoint, 0, n)
	for _, p := range w.Points {
		for _, c := range p.Cores {
			out = append(out, results.CPUPoint{
				Cell: cell, Trial: trial, Time: p.Time, CPU: c.CPU, CPUPercent: c.CPUPercent,
			})
		}
	}
	return out
}

// BusiestNetRxCPU returns the CPU with the highest NET_RX softirq rate,
// the core that takes a datapath's receive processing, or -1 if no core
// ran NET_RX. Ties go to the lowest CPU number.
func BusiestNetRxCPU(cores []results.CoreStat) int {
	best, bestRate := -1, 0.0
	for _, c := range cores {
		if c.NetRxPerSec > bestRate || (c.NetRxPerSec == bestRate && best >= 0 && c.CPU < best) {
			best, bestRate = c.CPU, c.NetRxPerSec
		}
	}
	return best
}

// pollPercent is the share of the window CPU cpu spent in its polling
// state, from its counter at both ends; nil where either reading lacks
// it. The counter grows when the CPU leaves the state, so a stint still
// running at an end counts in the window it ends in: polling is cut at
// most every tick, and the share is held to 0-100%.
func pollPercent(first, last map[int]uint64, cpu int, secs float64) *float64 {
	a, ok1 := first[cpu]
	b, ok2 := last[cpu]
	if !ok1 || !ok2 || b < a || secs <= 0 {
		return nil
	}
	p := min(float64(b-a)/(secs*1e6)*100, 100)
	return &p
}
