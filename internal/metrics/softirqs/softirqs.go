// Package softirqs reads /proc/softirqs, the per-CPU count of each
// softirq type raised since boot.
//
// The kernel (fs/proc/softirqs.c) prints a header of "CPU%-8d" names and
// one "%12s:" row per softirq type with a " %10u" count per CPU. The
// header names the CPUs, so columns are matched by name rather than by
// position: the kernel lists every possible CPU, which can be more than
// are online (and, in principle, a list with gaps).
// The counts are 32-bit and wrap; callers take deltas modulo 2^32.
package softirqs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Names of the softirq types a network benchmark cares about.
const (
	NetRx = "NET_RX"
	NetTx = "NET_TX"
)

// Softirqs is one read of /proc/softirqs.
type Softirqs struct {
	// CPUs holds the CPU number of each column in ascending order.
	CPUs []int
	// Names holds the softirq types in file order ("HI", "TIMER", ...).
	Names []string
	// counts is row-major: counts[i*len(CPUs)+j] is Names[i] on CPUs[j].
	counts []uint64
}

// Parse reads the contents of /proc/softirqs.
func Parse(data []byte) (*Softirqs, error) {
	s := new(Softirqs)
	if err := s.Parse(data); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse replaces s with the contents of /proc/softirqs, reusing its slices
// and, when the types are unchanged, its name strings, so that parsing
// every second does not allocate. On error s is left in an unspecified
// state.
func (s *Softirqs) Parse(data []byte) error {
	s.CPUs = s.CPUs[:0]
	s.counts = s.counts[:0]
	rows := 0
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var err error
		if n == 1 {
			err = s.parseHeader(line)
		} else {
			err = s.parseRow(line, rows)
			rows++
		}
		if err != nil {
			return fmt.Errorf("parse /proc/softirqs line %d: %w", n, err)
		}
	}
	if len(s.CPUs) == 0 {
		return errors.New("parse /proc/softirqs: no CPU header")
	}
	if rows == 0 {
		return errors.New("parse /proc/softirqs: no softirq rows")
	}
	s.Names = s.Names[:rows]
	return nil
}

func (s *Softirqs) parseHeader(line []byte) error {
	for f := range bytes.FieldsSeq(line) {
		num, ok := bytes.CutPrefix(f, []byte("CPU"))
		id, err := strconv.Atoi(string(num))
		if !ok || err != nil || id < 0 || id > cpuset.MaxCPU || num[0] == '+' || (len(num) > 1 && num[0] == '0') {
			return fmt.Errorf("bad CPU column name %q", f)
		}
		if k := len(s.CPUs); k > 0 && id <= s.CPUs[k-1] {
			return fmt.Errorf("column CPU%d after CPU%d", id, s.CPUs[k-1])
		}
		s.CPUs = append(s.CPUs, id)
	}
	return nil
}

func (s *Softirqs) parseRow(line []byte, row int) error {
	cols := -1
	for f := range bytes.FieldsSeq(line) {
		if cols < 0 {
			name, ok := bytes.CutSuffix(f, []byte(":"))
			if !ok || len(name) == 0 || bytes.ContainsRune(name, ':') {
				return fmt.Errorf("bad softirq name %q", f)
			}
			for i := range row {
				if s.Names[i] == string(name) {
					return fmt.Errorf("softirq %s listed twice", name)
				}
			}
			if row < len(s.Names) {
				if s.Names[row] != string(name) {
					s.Names[row] = string(name)
				}
			} else {
				s.Names = append(s.Names, string(name))
			}
			cols = 0
			continue
		}
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return fmt.Errorf("%s column %d: bad count %q", s.Names[row], cols+1, f)
		}
		s.counts = append(s.counts, v)
		cols++
	}
	if cols != len(s.CPUs) {
		return fmt.Errorf("%s has %d counts for %d CPUs", s.Names[row], cols, len(s.CPUs))
	}
	return nil
}

// Row returns the counts of one softirq type aligned with s.CPUs, or nil
// if the type is not listed. The slice aliases s.
func (s *Softirqs) Row(name string) []uint64 {
	for i, n := range s.Names {
		if n == name {
			w := len(s.CPUs)
			return s.counts[i*w : (i+1)*w : (i+1)*w]
		}
	}
	return nil
}

// Count returns the count of one softirq type on one CPU and whether both
// are listed.
func (s *Softirqs) Count(name string, cpu int) (uint64, bool) {
	r := s.Row(name)
	if r == nil {
		return 0, false
	}
	for j, c := range s.CPUs {
		if c == cpu {
			return r[j], true
		}
	}
	return 0, false
}
