// Package softnet reads /proc/net/softnet_stat, the per-CPU counters of
// the kernel's receive path (struct softnet_data).
//
// Each line is one online CPU, printed as space-separated "%08x" columns
// (net/core/net-procfs.c, softnet_seq_show):
//
//	0 processed       packets this CPU handed to the stack
//	1 dropped         packets dropped because the backlog was full
//	2 time_squeeze    net_rx_action ran out of budget or time with work left
//	3-8               always 0 today (once fastroute and cpu_collision)
//	9 received_rps    times this CPU was woken by an RPS IPI
//	10 flow_limit_count
//	11 backlog length (input_qlen + process_qlen)
//	12 CPU number
//	13 input_qlen, 14 process_qlen
//
// Old kernels print 9 to 11 columns, later ones 13, recent 6.x ones 15. The
// lines skip offline CPUs, so line order is the CPU number only when every
// CPU is online; where column 12 exists it is used instead. The counters
// are 32-bit and wrap; callers take deltas modulo 2^32.
package softnet

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Column positions of the fields cnibench uses.
const (
	colProcessed   = 0
	colDropped     = 1
	colTimeSqueeze = 2
	colReceivedRPS = 9
	colFlowLimit   = 10
	colBacklog     = 11
	colCPU         = 12
	colInputQLen   = 13
	colProcessQLen = 14
	// minColumns is the oldest format (before RPS): columns 0-8.
	minColumns = 9
)

// CPU is one line of softnet_stat. Fields the kernel does not print read
// as zero.
type CPU struct {
	// CPU is the CPU number from column 12, or the line number when the
	// kernel does not print it (see Stat.Indexed).
	CPU            int
	Processed      uint64
	Dropped        uint64
	TimeSqueeze    uint64
	ReceivedRPS    uint64
	FlowLimitCount uint64
	// BacklogLen, InputQLen and ProcessQLen are gauges, not counters.
	BacklogLen  uint64
	InputQLen   uint64
	ProcessQLen uint64
}

// Stat is one read of softnet_stat.
type Stat struct {
	CPUs []CPU
	// Columns is the number of columns per line.
	Columns int
	// Indexed says whether CPU numbers came from the file; when false they
	// are line numbers and are wrong if a CPU was offline. The caller can
	// remap them with the online list of /proc/stat, which skips the same
	// CPUs in the same order.
	Indexed bool
}

// Parse reads the contents of /proc/net/softnet_stat.
func Parse(data []byte) (*Stat, error) {
	s := new(Stat)
	if err := s.Parse(data); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse replaces s with the contents of /proc/net/softnet_stat, reusing
// s.CPUs. On error s is left in an unspecified state.
func (s *Stat) Parse(data []byte) error {
	s.CPUs = s.CPUs[:0]
	s.Columns = 0
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		c, cols, err := parseLine(line)
		if err != nil {
			return fmt.Errorf("parse /proc/net/softnet_stat line %d: %w", n, err)
		}
		if s.Columns == 0 {
			s.Columns = cols
		} else if cols != s.Columns {
			return fmt.Errorf("parse /proc/net/softnet_stat line %d: %d columns after lines of %d", n, cols, s.Columns)
		}
		if cols <= colCPU {
			c.CPU = len(s.CPUs)
		} else if k := len(s.CPUs); k > 0 && c.CPU <= s.CPUs[k-1].CPU {
			return fmt.Errorf("parse /proc/net/softnet_stat line %d: cpu %d after cpu %d", n, c.CPU, s.CPUs[k-1].CPU)
		}
		s.CPUs = append(s.CPUs, c)
	}
	if len(s.CPUs) == 0 {
		return errors.New("parse /proc/net/softnet_stat: no lines")
	}
	s.Indexed = s.Columns > colCPU
	return nil
}

func parseLine(line []byte) (CPU, int, error) {
	var c CPU
	cols := 0
	for f := range bytes.FieldsSeq(line) {
		v, err := strconv.ParseUint(string(f), 16, 64)
		if err != nil {
			return c, 0, fmt.Errorf("column %d: bad hex value %q", cols, f)
		}
		switch cols {
		case colProcessed:
			c.Processed = v
		case colDropped:
			c.Dropped = v
		case colTimeSqueeze:
			c.TimeSqueeze = v
		case colReceivedRPS:
			c.ReceivedRPS = v
		case colFlowLimit:
			c.FlowLimitCount = v
		case colBacklog:
			c.BacklogLen = v
		case colCPU:
			if v > cpuset.MaxCPU {
				return c, 0, fmt.Errorf("column %d: bad cpu number %d", cols, v)
			}
			c.CPU = int(v)
		case colInputQLen:
			c.InputQLen = v
		case colProcessQLen:
			c.ProcessQLen = v
		}
		cols++
	}
	if cols < minColumns {
		return c, 0, fmt.Errorf("%d columns, want at least %d", cols, minColumns)
	}
	return c, cols, nil
}

// Lookup returns the line of CPU cpu and whether it was listed.
func (s *Stat) Lookup(cpu int) (CPU, bool) {
	if cpu >= 0 && cpu < len(s.CPUs) && s.CPUs[cpu].CPU == cpu {
		return s.CPUs[cpu], true
	}
	for _, c := range s.CPUs {
		if c.CPU == cpu {
			return c, true
		}
	}
	return CPU{}, false
}

// Renumber replaces line-order CPU numbers with the given online CPU list
// (ascending, as /proc/stat lists it) when the file has no CPU column and
// the counts agree. It reports whether the numbers are now CPU numbers.
func (s *Stat) Renumber(online []int) bool {
	if s.Indexed {
		return true
	}
	if len(online) != len(s.CPUs) {
		return false
	}
	for i := range s.CPUs {
		s.CPUs[i].CPU = online[i]
	}
	s.Indexed = true
	return true
}
