package iperf3

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/results"
)

// Metric names this driver adds (units follow analysis.Unit's suffix
// conventions).
const (
	// MetricOffered is the offered load, -b times -P, bit/s.
	MetricOffered = "offered_bps"
	// MetricSent is what the pktgen sender actually sent per pair, each
	// stream's packets' payload over its own run time, summed, bit/s:
	// below MetricOffered where the sender fell behind its schedule (a
	// slow or stalled CPU). Its packets are those it handed its device,
	// sent or refused (MetricRefused): a refused packet took its slot of
	// the schedule as a sent one does.
	MetricSent = "sent_bps"
	// MetricRefused is the packets the pktgen sender's device refused
	// (pktgen's errors: the driver returned NET_XMIT_DROP or _CN, as a
	// veth does when its peer's backlog is full), summed over pairs. They
	// are in MetricPackets and MetricLost: lost on the path's first hop.
	MetricRefused = "refused_count"
	// UDP receiver counters over the measured window.
	MetricJitter     = results.MetricJitter
	MetricLostPct    = "lost_percent"
	MetricLost       = "lost_count"
	MetricPackets    = "packets_count"
	MetricOutOfOrder = "out_of_order_count"
	// TCP sender state averaged over the measured intervals and streams.
	MetricCwnd = "snd_cwnd_bytes"
	MetricRTT  = "rtt_us"
	// Series names in Result.Series (one value per measured interval).
	SeriesBitrate     = "bitrate_bps"
	SeriesRetransmits = "retransmits_count"
	// SeriesSenderBitrate is what the sender wrote each interval (the
	// seed-003 paper's Fig 8 plots it): under loss or delay it runs ahead
	// of, and burstier than, what the receiver read.
	SeriesSenderBitrate = "sender_bitrate_bps"
)

// pairMetrics turns one pair's two reports into its per-replica metrics
// and per-interval series. The receiver is the server, or the client with
// -R; the sender is the other end.
func pairMetrics(s *Server, c *Client) (map[string]float64, map[string][]float64, error) {
	recv, send := s.Report, c.Report
	if c.Reverse {
		recv, send = c.Report, s.Report
	}
	rm, err := Measure(recv)
	if err != nil {
		return nil, nil, fmt.Errorf("receiver: %w", err)
	}
	// The sender's report is for its state and series, and its count of
	// datagrams sent; the receiver's numbers stand without them.
	sm, smErr := Measure(send)
	m := map[string]float64{
		results.MetricBitrate:     rm.Bitrate,
		MetricSenderBitrate:       c.SenderBitrate,
		results.MetricRetransmits: c.Retransmits,
	}
	series := map[string][]float64{}
	if len(rm.Bitrates) > 0 {
		series[SeriesBitrate] = rm.Bitrates
	}
	if u := rm.UDP; u != nil {
		m[MetricJitter] = u.JitterMs
		m[MetricLostPct] = u.LostPercent
		m[MetricLost] = u.LostPackets
		m[MetricPackets] = u.Packets
		m[MetricOutOfOrder] = recv.OutOfOrder
		// The receiver counts loss from gaps in the sequence numbers it
		// saw: when none arrived it saw no gap and reports 0 of 0 lost.
		// The sender's count says it was all lost (sentInWindow).
		if sent := sentInWindow(sm, smErr, c); u.Packets == 0 && sent > 0 {
			m[MetricLost], m[MetricPackets], m[MetricLostPct] = sent, sent, 100
		}
		if u.Packets == 0 {
			// No datagram, no jitter: iperf3 prints 0, which would pull
			// the trial's mean over pairs toward 0.
			delete(m, MetricJitter)
		}
	}
	if smErr != nil {
		return m, series, nil
	}
	if len(sm.Bitrates) > 0 {
		series[SeriesSenderBitrate] = sm.Bitrates
	}
	if sm.HasTCPInfo {
		m[MetricCwnd] = sm.CwndBytes
		m[MetricRTT] = sm.RTTUs
		series[MetricCwnd] = sm.Cwnd
		series[MetricRTT] = sm.RTT
	}
	if sm.Retransmits != nil {
		series[SeriesRetransmits] = sm.Retransmits
	}
	return m, series, nil
}

// sentInWindow is the datagrams the sender sent over the measured window
// (its report's intervals past the warm-up, without the drain, as the
// receiver's loss is counted), else the client's end.sum_sent.packets:
// its own count, or with -R the server's, which iperf3 fills in from the
// results exchange (iperf_api.c, iperf_print_results: a receiving
// stream's sender_packet_count is peer_packet_count). That count takes
// in the warm-up's datagrams under -R (iperf3 3.12, -O 1 -t 3: 153 where
// the server's measured intervals sent 114), so a trial whose other pair
// lost nothing read 57% lost where half its datagrams were.
func sentInWindow(sm Measured, smErr error, c *Client) float64 {
	if smErr == nil && sm.UDP != nil && sm.UDP.Packets > 0 {
		return sm.UDP.Packets
	}
	return c.SentPackets
}

// trialMetrics aggregates pairs: bitrates and state are means over pairs
// (the papers' "average bitrate read at each server"), counters are sums,
// and UDP loss % is recomputed from the summed counters.
func trialMetrics(per []map[string]float64) map[string]float64 {
	out := map[string]float64{}
	n := float64(len(per))
	sums := map[string]float64{}
	counts := map[string]float64{}
	for _, m := range per {
		for k, v := range m {
			sums[k] += v
			counts[k]++
		}
	}
	for k, v := range sums {
		switch k {
		case results.MetricRetransmits, MetricLost, MetricPackets, MetricOutOfOrder, MetricRefused:
			out[k] = v
		default:
			out[k] = v / counts[k]
		}
	}
	out[results.MetricBitrateSum] = sums[results.MetricBitrate]
	out[results.MetricBitrate] = sums[results.MetricBitrate] / n
	if p, ok := out[MetricPackets]; ok && p > 0 {
		out[MetricLostPct] = 100 * out[MetricLost] / p
	}
	return out
}
