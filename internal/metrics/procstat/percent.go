package procstat

import (
	"math"

	"github.com/cnibench/cnibench/internal/results"
)

// Percent returns the time split of one CPU between two reads of its line
// exactly as sysstat's `mpstat -P ALL 1` prints it (sysstat 12.x,
// get_per_cpu_interval and ll_sp_value), so numbers in cnibench reports can
// be checked against mpstat run by hand:
//
//   - guest and guest_nice are already part of user and nice in
//     /proc/stat, so %usr is user-guest, %nice is nice-guest_nice and the
//     interval is the sum of the other eight counters' deltas;
//   - a counter that went backwards (the dyn-tick race) contributes 0%;
//   - idle and iowait restart from zero when a CPU comes back online, so a
//     decrease of either is treated as a restart (iowait that moved into
//     idle is not, as in mpstat);
//   - a line of all zeros (an offline CPU, or the zero Times of a CPU that
//     has no line) gives all zeros;
//   - no change at all (a tickless idle CPU) gives 100% idle.
//
// The eight fields then sum to 100 up to rounding, except when counters
// went backwards or the CPU ran guests: results.CPUPercent has no guest
// fields, so guest time is in none of them. Differences of user-guest and
// nice-guest_nice wrap as in mpstat's unsigned arithmetic; where the whole
// interval comes out negative, for which mpstat prints 0.00 everywhere,
// Percent returns all zeros. It never returns NaN, Inf or a negative value.
// Percent also applies to the aggregate line (mpstat's "all" line is
// instead computed from the sum of the per-CPU lines).
func Percent(prev, cur Times) results.CPUPercent {
	if cur.busyIdle() == 0 {
		return results.CPUPercent{}
	}
	p := prev
	// mpstat's workarounds for CPUs coming back online, with its guard
	// against treating a counter that is about to overflow as a restart.
	const nearMax = ^uint64(0) - 0x7ffff
	if cur.IOWait < p.IOWait && p.IOWait < nearMax {
		if cur.Idle > p.Idle || p.Idle >= nearMax {
			p.IOWait = cur.IOWait // iowait re-accounted as idle
		} else {
			p.IOWait = 0
		}
	}
	if cur.Idle < p.Idle && p.Idle < nearMax {
		p.Idle = 0
	}

	// Sometimes guest grows slightly faster than the user time that
	// contains it; mpstat then counts 0% user and widens the interval by
	// the shortfall.
	pu, cu := p.User-p.Guest, cur.User-cur.Guest
	pn, cn := p.Nice-p.GuestNice, cur.Nice-cur.GuestNice
	var ishift uint64
	if cu < pu {
		ishift += pu - cu
	}
	if cn < pn {
		ishift += pn - cn
	}
	itv := cur.busyIdle() - p.busyIdle() + ishift
	switch {
	case itv == 0:
		return results.CPUPercent{Idle: 100}
	case itv > math.MaxInt64: // negative
		return results.CPUPercent{}
	}
	return results.CPUPercent{
		User:    spValue(pu, cu, itv),
		Nice:    spValue(pn, cn, itv),
		System:  spValue(p.System, cur.System, itv),
		IOWait:  spValue(p.IOWait, cur.IOWait, itv),
		IRQ:     spValue(p.IRQ, cur.IRQ, itv),
		SoftIRQ: spValue(p.SoftIRQ, cur.SoftIRQ, itv),
		Steal:   spValue(p.Steal, cur.Steal, itv),
		Idle:    spValue(p.Idle, cur.Idle, itv),
	}
}

// busyIdle is the sum mpstat uses as a CPU's elapsed time: every counter
// except guest and guest_nice, which user and nice already contain.
func (t Times) busyIdle() uint64 {
	return t.User + t.Nice + t.System + t.IOWait + t.Idle + t.Steal + t.IRQ + t.SoftIRQ
}

// spValue is sysstat's ll_sp_value: the share of itv by which a counter
// grew, in percent, or 0 if it went backwards.
func spValue(prev, cur, itv uint64) float64 {
	if cur < prev || itv == 0 {
		return 0
	}
	return float64(cur-prev) / float64(itv) * 100
}
