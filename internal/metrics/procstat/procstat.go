// Package procstat reads the CPU time counters of /proc/stat.
//
// Each "cpu" line holds cumulative USER_HZ ticks ("jiffies") in the order
// user nice system idle iowait irq softirq steal guest guest_nice. Kernels
// older than 2.6.33 print fewer columns (2.4: four; 2.6.0: seven; 2.6.11
// adds steal; 2.6.24 guest), so missing trailing columns read as zero.
// Only online CPUs have a line, which is how hotplug shows up here.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Times is one "cpu" line of /proc/stat in USER_HZ ticks. As in the
// kernel, User already contains Guest and Nice already contains GuestNice.
type Times struct {
	User      uint64
	Nice      uint64
	System    uint64
	Idle      uint64
	IOWait    uint64
	IRQ       uint64
	SoftIRQ   uint64
	Steal     uint64
	Guest     uint64
	GuestNice uint64
}

// CPU is the line of one online core.
type CPU struct {
	ID int
	Times
}

// Stat is the CPU part of one read of /proc/stat.
type Stat struct {
	// Total is the aggregate "cpu " line. The kernel sums it over all
	// possible CPUs, so it keeps counting the frozen counters of offline
	// ones, and converts to ticks after summing, so it is not exactly the
	// sum of CPUs.
	Total Times
	// CPUs holds the per-core lines in ascending ID order, as the kernel
	// prints them; offline CPUs are absent.
	CPUs []CPU
}

// minColumns is the number of counters on the oldest format we accept
// (Linux 2.4: user nice system idle).
const minColumns = 4

// Parse reads the contents of /proc/stat.
func Parse(data []byte) (*Stat, error) {
	s := new(Stat)
	if err := s.Parse(data); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse replaces s with the contents of /proc/stat, reusing s.CPUs so a
// sampler that parses every second does not allocate. On error s is left
// in an unspecified state.
func (s *Stat) Parse(data []byte) error {
	s.Total = Times{}
	s.CPUs = s.CPUs[:0]
	sawTotal := false
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if !bytes.HasPrefix(line, []byte("cpu")) {
			continue // intr, ctxt, btime, processes, softirq, ...
		}
		id, t, err := parseLine(line)
		if err != nil {
			return fmt.Errorf("parse /proc/stat line %d: %w", n, err)
		}
		if id < 0 {
			if sawTotal {
				return fmt.Errorf("parse /proc/stat line %d: second aggregate cpu line", n)
			}
			sawTotal = true
			s.Total = t
			continue
		}
		if k := len(s.CPUs); k > 0 && id <= s.CPUs[k-1].ID {
			return fmt.Errorf("parse /proc/stat line %d: cpu%d after cpu%d", n, id, s.CPUs[k-1].ID)
		}
		s.CPUs = append(s.CPUs, CPU{ID: id, Times: t})
	}
	if !sawTotal {
		return errors.New("parse /proc/stat: no aggregate cpu line")
	}
	return nil
}

// parseLine reads "cpu  1 2 3 ..." (id -1) or "cpuN 1 2 3 ...".
func parseLine(line []byte) (id int, t Times, err error) {
	var vals [10]uint64
	cols := 0
	first := true
	for f := range bytes.FieldsSeq(line) {
		if first {
			first = false
			id, err = parseName(f)
			if err != nil {
				return 0, t, err
			}
			continue
		}
		v, perr := strconv.ParseUint(string(f), 10, 64)
		if perr != nil {
			return 0, t, fmt.Errorf("column %d: bad counter %q", cols+1, f)
		}
		// Columns a future kernel may append are ignored.
		if cols < len(vals) {
			vals[cols] = v
		}
		cols++
	}
	if cols < minColumns {
		return 0, t, fmt.Errorf("%d counters, want at least %d", cols, minColumns)
	}
	t = Times{
		User: vals[0], Nice: vals[1], System: vals[2], Idle: vals[3],
		IOWait: vals[4], IRQ: vals[5], SoftIRQ: vals[6], Steal: vals[7],
		Guest: vals[8], GuestNice: vals[9],
	}
	return id, t, nil
}

// parseName turns "cpu" into -1 and "cpuN" into N.
func parseName(f []byte) (int, error) {
	num := f[len("cpu"):]
	if len(num) == 0 {
		return -1, nil
	}
	id, err := strconv.Atoi(string(num))
	if err != nil || id < 0 || id > cpuset.MaxCPU || (len(num) > 1 && num[0] == '0') || num[0] == '+' {
		return 0, fmt.Errorf("bad cpu name %q", f)
	}
	return id, nil
}

// Lookup returns the counters of CPU id and whether it was online.
func (s *Stat) Lookup(id int) (Times, bool) {
	// Lines are sorted and usually dense, so try the direct index first.
	if id >= 0 && id < len(s.CPUs) && s.CPUs[id].ID == id {
		return s.CPUs[id].Times, true
	}
	lo, hi := 0, len(s.CPUs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case s.CPUs[m].ID < id:
			lo = m + 1
		case s.CPUs[m].ID > id:
			hi = m
		default:
			return s.CPUs[m].Times, true
		}
	}
	return Times{}, false
}

// Online returns the IDs of the CPUs that have a line.
func (s *Stat) Online() cpuset.Set {
	out := make(cpuset.Set, len(s.CPUs))
	for i, c := range s.CPUs {
		out[i] = c.ID
	}
	return out
}
