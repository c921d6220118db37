// Package metrics samples per-core CPU time and network softirq counters
// during a measured window, the numbers that show which core pays for a
// datapath's receive processing.
//
// Design notes: a Sampler reads three small procfs files (/proc/stat,
// /proc/softirqs, /proc/net/softnet_stat) when the window starts, once
// per interval from one goroutine, and when it stops. It keeps its read
// buffer and parsed structures between reads and starts no process, so
// a reading costs well under a millisecond of one core (BenchmarkSample:
// about 65 µs and 1 KB of garbage on a 2-vCPU VM), far below the 1% of
// measured bitrate the harness may cost.
//
// CPU percentages over the window come from the first and the last read,
// as `mpstat -P ALL` computes an interval, since /proc/stat counters are
// 64-bit. Softirq and softnet counters are 32-bit and wrap within the hour
// on a busy core, so their rates sum the increments of every interval
// instead of subtracting the first read from the last.
package metrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/cpuidle"
)

// Defaults for NewSampler.
const (
	DefaultProcRoot = "/proc"
	DefaultInterval = time.Second
)

// Sampler records one measured window at a time. Make one with
// NewSampler. Start and Stop must be called from one goroutine; a Sampler
// can be started again after Stop.
type Sampler struct {
	rec *recorder

	running bool
	stop    chan struct{}
	done    chan struct{}
	err     error // first failed reading in the background; owned by loop
}

// NewSampler returns a Sampler that reads procRoot/stat, procRoot/softirqs
// and procRoot/net/softnet_stat every interval. An empty procRoot means
// /proc and a non-positive interval means one second; tests point procRoot
// at a directory of captured files.
func NewSampler(procRoot string, interval time.Duration) *Sampler {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Sampler{rec: newRecorder(procRoot, interval)}
}

// WithIdle has the Sampler also read each CPU's time in cpuidle's
// polling state through r at the window's two ends (CoreStat.Poll):
// r is this machine's /sys for the local engine and the agent's node.
func (s *Sampler) WithIdle(r cpuidle.Reader) *Sampler {
	s.rec.idle = r
	return s
}

// Start takes the first reading, which marks the start of the measured
// window, and starts sampling in the background.
func (s *Sampler) Start() error {
	if s.running {
		return errors.New("start sampler: already running")
	}
	if err := s.rec.begin(time.Now()); err != nil {
		return fmt.Errorf("start sampler: %w", err)
	}
	s.running = true
	s.err = nil
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	go s.loop(s.stop, s.done)
	return nil
}

func (s *Sampler) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(s.rec.interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			// Stamp the reading, not the tick, which may have waited.
			// A failed reading leaves the previous one in place, so the
			// next interval spans the gap.
			t := time.Now()
			if err := s.rec.sample(t, false); err != nil && s.err == nil {
				s.err = fmt.Errorf("sample at %s: %w", t.Format(time.RFC3339), err)
			}
		}
	}
}

// Stop takes the final reading, which marks the end of the measured
// window, and returns the window. A last interval shorter than half the
// sampling interval adds no point but counts in the window's averages.
// If a reading failed (including the
// final one) the error is returned together with the window computed from
// the readings that succeeded.
func (s *Sampler) Stop() (Window, error) {
	if !s.running {
		return Window{}, errors.New("stop sampler: not running")
	}
	close(s.stop)
	<-s.done
	s.running = false

	err := s.rec.sample(time.Now(), true)
	if err != nil {
		err = fmt.Errorf("stop sampler: %w", err)
	}
	return s.rec.window(), errors.Join(s.err, err)
}
