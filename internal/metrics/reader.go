package metrics

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/procstat"
	"github.com/cnibench/cnibench/internal/metrics/softirqs"
	"github.com/cnibench/cnibench/internal/metrics/softnet"
)

// reader reads the three source files into buffers it keeps, and parses
// them into structures it keeps, so a read allocates next to nothing.
type reader struct {
	statPath, softirqsPath, softnetPath string

	buf       []byte
	online    []int
	softirqs  softirqs.Softirqs
	softnet   softnet.Stat
	softnetOK bool // softnet's CPU numbers are right
}

func newReader(procRoot string) *reader {
	return &reader{
		statPath:     filepath.Join(procRoot, "stat"),
		softirqsPath: filepath.Join(procRoot, "softirqs"),
		softnetPath:  filepath.Join(procRoot, "net", "softnet_stat"),
		buf:          make([]byte, 0, 64<<10),
	}
}

// read parses all three files; st receives /proc/stat, the other two are
// left in r.softirqs and r.softnet (if r.softnetOK) until the next read.
func (r *reader) read(st *procstat.Stat) error {
	var err error
	if r.buf, err = readFile(r.statPath, r.buf); err != nil {
		return err
	}
	if err := st.Parse(r.buf); err != nil {
		return fmt.Errorf("%s: %w", r.statPath, err)
	}
	if r.buf, err = readFile(r.softirqsPath, r.buf); err != nil {
		return err
	}
	if err := r.softirqs.Parse(r.buf); err != nil {
		return fmt.Errorf("%s: %w", r.softirqsPath, err)
	}
	if r.buf, err = readFile(r.softnetPath, r.buf); err != nil {
		return err
	}
	if err := r.softnet.Parse(r.buf); err != nil {
		return fmt.Errorf("%s: %w", r.softnetPath, err)
	}
	// Old kernels number softnet lines by position among online CPUs;
	// /proc/stat lists the same online CPUs in the same order. If a CPU
	// changed state between the two reads the counts differ, and this
	// reading's softnet lines are skipped rather than credited to the
	// wrong CPUs.
	r.online = r.online[:0]
	for _, c := range st.CPUs {
		r.online = append(r.online, c.ID)
	}
	r.softnetOK = r.softnet.Renumber(r.online)
	return nil
}

// readFile reads a whole file into buf[:0], growing it as needed. procfs
// files report size 0, so it reads until EOF rather than trusting Stat.
func readFile(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, err // *PathError already names the file
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// counter keeps the last value of a per-CPU kernel counter and sums its
// increments, so that a window's total survives any number of 32-bit
// wraps as long as it is read more often than it wraps.
type counter struct {
	last  []uint64 // indexed by CPU number
	seen  []bool
	total []uint64
}

// observe records the value v of the counter on cpu.
func (c *counter) observe(cpu int, v uint64) {
	if cpu >= len(c.last) {
		n := cpu + 1
		c.last = append(c.last, make([]uint64, n-len(c.last))...)
		c.seen = append(c.seen, make([]bool, n-len(c.seen))...)
		c.total = append(c.total, make([]uint64, n-len(c.total))...)
	}
	if c.seen[cpu] {
		c.total[cpu] += delta(c.last[cpu], v)
	}
	c.last[cpu], c.seen[cpu] = v, true
}

// sum returns the increments seen on cpu.
func (c *counter) sum(cpu int) uint64 {
	if cpu < 0 || cpu >= len(c.total) {
		return 0
	}
	return c.total[cpu]
}

// delta is cur-prev for a counter that may be 32 or 64 bits wide: a
// decrease from a value that fits in 32 bits is taken as a 32-bit wrap
// (softirq and softnet counters are unsigned int in the kernel, printed
// without their width); any other decrease is a reset and counts 0.
func delta(prev, cur uint64) uint64 {
	switch {
	case cur >= prev:
		return cur - prev
	case prev <= 0xffffffff:
		return uint64(uint32(cur - prev))
	default:
		return 0
	}
}

// elapsed is the time between two reads in seconds, or 0.
func elapsed(from, to time.Time) float64 {
	if d := to.Sub(from).Seconds(); d > 0 {
		return d
	}
	return 0
}
