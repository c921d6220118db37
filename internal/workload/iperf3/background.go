package iperf3

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// Background load (seed 004): K TCP connections, each capped at a rate
// with -b (iperf3 applies -b per stream), spread as evenly as possible over
// the M background pairs as -P streams. The background starts before the
// measured pairs and runs one second longer than the whole trial, so it
// covers the measured window on both sides; its own numbers are reported
// beside the measured ones.

// Background metric names.
const (
	MetricBackgroundConns   = "background_connections_count"
	MetricBackgroundBitrate = "background_bitrate_bps"
	backgroundExtra         = time.Second
)

type background struct {
	k       int
	servers []engine.Process
	wg      sync.WaitGroup
	clients []clientResult
	cancel  context.CancelCauseFunc
}

// streamsPerPair spreads k connections over m pairs.
func streamsPerPair(k, m int) []int {
	out := make([]int, m)
	for j := range m {
		out[j] = k / m
		if j < k%m {
			out[j]++
		}
	}
	return out
}

func (d *Driver) startBackground(ctx context.Context, t workload.Trial, p plan) (*background, error) {
	bg := &background{}
	w := t.Spec
	k := w.BackgroundConnections()
	if k == 0 || len(t.Background) == 0 {
		return bg, nil
	}
	rate := w.Background.Rate
	if _, ok := study.ParseRate(rate); !ok {
		return nil, fmt.Errorf("background rate %q is not a bitrate", rate)
	}
	bg.k = k
	// The background runs the trial plus backgroundExtra; the deadline
	// adds the driver's trial slack (connect attempts and reports), as the
	// measured pairs' does, so a background client that hangs (a server
	// that stopped answering mid-stream) fails the trial instead of
	// holding the run forever.
	limit := t.Duration + backgroundExtra + d.slack()
	tctx, cancelTime := context.WithTimeoutCause(ctx, limit, fmt.Errorf("background load did not finish within %v", limit))
	bctx, cancel := context.WithCancelCause(tctx)
	bg.cancel = func(cause error) { cancel(cause); cancelTime() }
	secs := int((t.Duration + backgroundExtra) / time.Second)
	per := streamsPerPair(k, len(t.Background))
	bg.clients = make([]clientResult, len(t.Background))
	started := make(chan error, len(t.Background))
	n := 0
	for j, pr := range t.Background {
		if per[j] == 0 {
			continue
		}
		// The port of the pod carrying pair j, apart from every measured
		// pod's: its Service forwards it on a cluster.
		port := pr.Port
		if port == 0 {
			bg.stop()
			return nil, fmt.Errorf("background pair %d has no port", j)
		}
		s, err := pr.Server.Start(bctx, []string{d.Bin, "-s", "-1", "-J", "-p", strconv.Itoa(port)})
		if err != nil {
			bg.stop()
			return nil, fmt.Errorf("background pair %d: start server: %w", j, err)
		}
		bg.servers = append(bg.servers, s)
		argv := []string{d.Bin, "-c", engine.Addr(pr.Server), "-p", strconv.Itoa(port), "-J",
			"-t", strconv.Itoa(secs), "-b", rate, "-P", strconv.Itoa(per[j]),
			"--connect-timeout", strconv.Itoa(connectTimeoutMs)}
		n++
		bg.wg.Go(func() { bg.clients[j] = d.runClient(bctx, pr.Client, argv, started) })
	}
	var err error
	for range n {
		err = errors.Join(err, <-started)
	}
	if err != nil {
		bg.stop()
		return nil, fmt.Errorf("background: %w", err)
	}
	return bg, nil
}

func (bg *background) stop() {
	if bg.cancel != nil {
		bg.cancel(errors.New("measured trial ended"))
	}
	for _, s := range bg.servers {
		s.Stop()
	}
	bg.wg.Wait()
	for _, s := range bg.servers {
		_, _, _ = s.Wait()
	}
}

// wait lets the background finish (or stops it when the measured trial
// failed) and returns its metrics.
func (bg *background) wait(ok bool) (map[string]float64, error) {
	if bg.k == 0 {
		return nil, nil
	}
	if !ok {
		bg.stop()
		return nil, nil
	}
	bg.wg.Wait()
	for _, s := range bg.servers {
		_, _ = waitServer(s, true)
	}
	bg.cancel(nil)
	var sum float64
	var errs []error
	for j, c := range bg.clients {
		if c.err != nil {
			errs = append(errs, fmt.Errorf("pair %d: %w", j, c.err))
			continue
		}
		if c.rep != nil {
			sum += c.rep.SenderBitrate
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return map[string]float64{MetricBackgroundConns: float64(bg.k), MetricBackgroundBitrate: sum}, nil
}
