package iperf3

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
)

// Metrics of a loss-ceiling trial (lossCeiling). Rates are per stream,
// as -b is; offered_bps is the found rate times the streams.
const (
	// MetricMSS is the swept TCP maximum segment size (mss), bytes.
	MetricMSS           = "mss_bytes"
	MetricCeilingPct    = "loss_ceiling_pct"
	MetricCeilingRate   = "ceiling_rate_bps"
	MetricCeilingLoss   = "ceiling_loss_pct"
	MetricCeilingProbes = "ceiling_probes"
	// MetricCeilingAtHigh is 1 when even the search's high rate passed:
	// the path was not saturated and the rate is a lower bound.
	MetricCeilingAtHigh = "ceiling_at_high"
	// SeriesProbeRate and SeriesProbeLoss are the search's steps in probe
	// order (offered bit/s per stream, loss %), kept with replica 0's
	// series: the probes ran every pair at once, so the steps are the
	// trial's, not a pair's.
	SeriesProbeRate = "ceiling_probe_rate_bps"
	SeriesProbeLoss = "ceiling_probe_loss_pct"
	// SeriesProbeSent is what each probe's sender actually sent per stream
	// (pktgen's MetricSent; iperf3's sender_bitrate over its streams);
	// its loss is of that.
	SeriesProbeSent = "ceiling_probe_sent_bps"
	// MetricCeilingSenderBound is 1 when the passing probe the rate comes
	// from fell behind its rate: the rate is what its sender sent, the
	// most it could, and the path's ceiling is at least that
	// (ceiling.Result.SenderBound).
	MetricCeilingSenderBound = "ceiling_sender_bound"
)

// searchCeiling finds the highest rate per stream whose loss stays under
// the ceiling, probing with short trials through the same code as the
// measured one (servers, clients, the receiver's measured window).
func (d *Driver) searchCeiling(ctx context.Context, t workload.Trial, p plan, c study.Ceiling) (ceiling.Result, error) {
	s := ceiling.Search{Ceiling: c.Pct, Low: c.Low, High: c.High, Step: c.Step, Rel: c.Rel}
	if c.Sender == study.SenderPktgen {
		return s.Run(ctx, func(ctx context.Context, rate float64) (ceiling.Outcome, error) {
			res, err := d.pktgenRun(ctx, t, p, rate, c.Probe, nil)
			if err != nil {
				return ceiling.Outcome{}, err
			}
			return probeOutcome(res.Metrics, MetricSent, p.parallel)
		})
	}
	quiet := *d
	quiet.Output = nil // the run keeps the measured trial's JSON, not the probes'
	pt := t
	pt.Duration, pt.Warmup, pt.Started = c.Probe, 0, nil
	return s.Run(ctx, func(ctx context.Context, rate float64) (ceiling.Outcome, error) {
		pp := p
		pp.rate, pp.seconds, pp.omit = formatRate(rate), int(c.Probe/time.Second), 0
		res, err := quiet.run(ctx, pt, pp)
		if err != nil {
			return ceiling.Outcome{}, err
		}
		return probeOutcome(res.Metrics, MetricSenderBitrate, pp.parallel)
	})
}

// probeOutcome is a probe's loss and what its sender sent per stream:
// the search's rates are per stream (iperf3's -b; each pktgen stream is
// asked for the rate), its sent metric (sentKey) the mean pair's, its
// streams summed. Compared whole with a rate per stream, a pair of two
// streams would never look behind, and a sender-bound ceiling would be
// twice what a stream sent.
func probeOutcome(m map[string]float64, sentKey string, parallel int) (ceiling.Outcome, error) {
	loss, ok := m[MetricLostPct]
	if !ok {
		return ceiling.Outcome{}, errors.New("the probe reported no UDP loss")
	}
	return ceiling.Outcome{LossPct: loss, Sent: m[sentKey] / float64(max(parallel, 1))}, nil
}

// formatRate writes a rate for iperf3 -b, in bit/s.
func formatRate(r float64) string { return strconv.FormatFloat(math.Round(r), 'f', 0, 64) }

// addCeiling records the search in the measured trial's result.
func addCeiling(res *workload.Result, c study.Ceiling, r ceiling.Result) {
	res.Metrics[MetricCeilingPct] = c.Pct
	res.Metrics[MetricCeilingRate] = r.Rate
	res.Metrics[MetricCeilingLoss] = r.LossPct
	res.Metrics[MetricCeilingProbes] = float64(len(r.Steps))
	res.Metrics[MetricCeilingAtHigh] = 0
	if r.AtHigh {
		res.Metrics[MetricCeilingAtHigh] = 1
	}
	res.Metrics[MetricCeilingSenderBound] = 0
	if r.SenderBound {
		res.Metrics[MetricCeilingSenderBound] = 1
	}
	rates := make([]float64, len(r.Steps))
	losses := make([]float64, len(r.Steps))
	sent := make([]float64, len(r.Steps))
	anySent, behind := false, false
	for i, s := range r.Steps {
		rates[i], losses[i], sent[i] = s.Rate, s.LossPct, s.Sent
		anySent = anySent || s.Sent > 0
		behind = behind || s.Behind()
	}
	if w := behindWarning(c.Sender); behind && !slices.Contains(res.Warnings, w) {
		res.Warnings = append(res.Warnings, w)
	}
	if len(res.Series) == 0 {
		res.Series = []map[string][]float64{{}}
	}
	if res.Series[0] == nil {
		res.Series[0] = map[string][]float64{}
	}
	res.Series[0][SeriesProbeRate] = rates
	res.Series[0][SeriesProbeLoss] = losses
	if anySent {
		res.Series[0][SeriesProbeSent] = sent
	}
}

// ceilingFirst runs the search when the workload has a loss ceiling and
// returns the plan with the found rate; found is nil without a ceiling.
func (d *Driver) ceilingFirst(ctx context.Context, t workload.Trial, p plan) (plan, *study.Ceiling, *ceiling.Result, error) {
	c, ok, err := t.Spec.Ceiling()
	if !ok {
		return p, nil, nil, nil
	}
	if err != nil {
		return p, nil, nil, err
	}
	r, err := d.searchCeiling(ctx, t, p, c)
	if err != nil {
		return p, nil, nil, fmt.Errorf("loss-ceiling search (%g%%): %w", c.Pct, err)
	}
	p.rate = formatRate(r.Rate)
	return p, &c, &r, nil
}
