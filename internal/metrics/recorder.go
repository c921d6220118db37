package metrics

import (
	"errors"
	"time"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/metrics/procstat"
	"github.com/cnibench/cnibench/internal/metrics/softirqs"
)

// recorder turns a sequence of readings into a Window. It does no timing
// of its own, so tests drive it with captured files and chosen times.
type recorder struct {
	r        *reader
	interval time.Duration

	prev, cur  procstat.Stat // prev is the last successful reading
	firstTime  time.Time
	prevTime   time.Time
	first      []procstat.Times // by CPU: counters when first seen
	seen       []bool           // by CPU: had a /proc/stat line
	netRx      counter
	processed  counter
	dropped    counter
	squeezed   counter
	receivedRP counter
	points     []point
	cores      []CorePercent // backing store of all points' cores
	// idle reads the CPUs' polling time (cpuidle.PollTimes) at the
	// window's two ends; nil leaves Poll unset. Read only there: the
	// counter is cumulative and 64-bit.
	idle                cpuidle.Reader
	pollFirst, pollLast map[int]uint64
}

// point locates one interval's cores in recorder.cores.
type point struct {
	time       time.Time
	start, end int
}

func newRecorder(procRoot string, interval time.Duration) *recorder {
	return &recorder{r: newReader(procRoot), interval: interval}
}

// begin forgets any previous window, keeping allocated memory, and takes
// the first reading at time t.
func (rec *recorder) begin(t time.Time) error {
	clear(rec.seen)
	for _, c := range []*counter{&rec.netRx, &rec.processed, &rec.dropped, &rec.squeezed, &rec.receivedRP} {
		*c = counter{last: c.last[:0], seen: c.seen[:0], total: c.total[:0]}
	}
	rec.points = rec.points[:0]
	rec.cores = rec.cores[:0]
	if err := rec.take(t, false); err != nil {
		return err
	}
	rec.firstTime = t
	rec.pollFirst, rec.pollLast = rec.polls(), nil
	return nil
}

// polls reads the CPUs' polling time; a failed reading leaves the
// window without Poll rather than failing it (the CPU split stands on
// /proc/stat alone).
func (rec *recorder) polls() map[int]uint64 {
	if rec.idle == nil {
		return nil
	}
	p, err := cpuidle.PollTimes(rec.idle)
	if err != nil {
		return nil
	}
	return p
}

// sample takes a reading at time t and adds the interval since the
// previous one as a point. The final reading of a window adds a point only
// if its interval is at least half the sampling interval: a much shorter
// one holds a handful of ticks and would be noise. It still counts in the
// window's averages.
func (rec *recorder) sample(t time.Time, final bool) error {
	err := rec.take(t, !final || t.Sub(rec.prevTime) >= rec.interval/2)
	if final && err == nil {
		rec.pollLast = rec.polls()
	}
	return err
}

func (rec *recorder) take(t time.Time, addPoint bool) error {
	if err := rec.r.read(&rec.cur); err != nil {
		return err
	}
	row := rec.r.softirqs.Row(softirqs.NetRx)
	if row == nil {
		return errors.New("/proc/softirqs has no NET_RX row")
	}
	for j, cpu := range rec.r.softirqs.CPUs {
		rec.netRx.observe(cpu, row[j])
	}
	if rec.r.softnetOK {
		for _, c := range rec.r.softnet.CPUs {
			rec.processed.observe(c.CPU, c.Processed)
			rec.dropped.observe(c.CPU, c.Dropped)
			rec.squeezed.observe(c.CPU, c.TimeSqueeze)
			rec.receivedRP.observe(c.CPU, c.ReceivedRPS)
		}
	}

	start := len(rec.cores)
	for _, c := range rec.cur.CPUs {
		if c.ID >= len(rec.seen) {
			n := c.ID + 1
			rec.seen = append(rec.seen, make([]bool, n-len(rec.seen))...)
			rec.first = append(rec.first, make([]procstat.Times, n-len(rec.first))...)
		}
		if !rec.seen[c.ID] {
			rec.seen[c.ID], rec.first[c.ID] = true, c.Times
		}
		if !addPoint {
			continue
		}
		// A CPU that just came online has no previous line: no point.
		if p, ok := rec.prev.Lookup(c.ID); ok {
			rec.cores = append(rec.cores, CorePercent{CPU: c.ID, CPUPercent: procstat.Percent(p, c.Times)})
		}
	}
	if addPoint {
		rec.points = append(rec.points, point{time: t, start: start, end: len(rec.cores)})
	}
	rec.prev, rec.cur = rec.cur, rec.prev
	rec.prevTime = t
	return nil
}
