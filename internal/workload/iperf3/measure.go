package iperf3

import (
	"errors"
	"fmt"

	"github.com/cnibench/cnibench/internal/workload"
)

// Measured is one end's view of the measured window: the non-omitted
// intervals without the trailing drain (see measure), summed or averaged.
// It is computed from whichever end is the receiver (the server, or the
// client with -R) for bitrate and UDP loss, and from the sender for the
// TCP congestion window and RTT.
type Measured struct {
	Bytes, Seconds, Bitrate float64
	// UDP receiver counters over the window: lost and expected datagrams
	// are summed, LostPercent is 100*Lost/Packets (so loss % is exactly
	// lost/total of the same window), jitter is the mean of the
	// intervals' jitter. Nil for TCP.
	UDP *UDPStats
	// CwndBytes and RTTUs are the means of the per-interval values (the
	// sender's TCP_INFO); HasTCPInfo says whether there were any.
	CwndBytes, RTTUs float64
	HasTCPInfo       bool
	// Cwnd and RTT are the per-interval series (window only).
	Cwnd, RTT []float64
	// Retransmits is the per-interval retransmit count (window only;
	// nil when the end printed none).
	Retransmits []float64
	// Bitrates is the per-interval bitrate in bit/s (window only): the
	// bytes this end received, or sent, each interval.
	Bitrates []float64
}

// Measure computes the measured window of a report.
func Measure(rep Report) (Measured, error) {
	var m Measured
	ivs := window(rep.Intervals, float64(rep.Duration))
	if len(ivs) == 0 {
		return m, errors.New("iperf3 report has no measured interval (the test ended within the warm-up)")
	}
	var jit, nj float64
	for _, iv := range ivs {
		m.Bytes += iv.Bytes
		m.Seconds += iv.Seconds
		if iv.Seconds > 0 {
			m.Bitrates = append(m.Bitrates, iv.Bytes*8/iv.Seconds)
		}
		if iv.UDP != nil {
			if m.UDP == nil {
				m.UDP = &UDPStats{}
			}
			m.UDP.LostPackets += iv.UDP.LostPackets
			m.UDP.Packets += iv.UDP.Packets
			jit += iv.UDP.JitterMs
			nj++
		}
		if iv.HasRetransmits {
			m.Retransmits = append(m.Retransmits, iv.Retransmits)
		}
		if iv.TCPInfo {
			m.Cwnd = append(m.Cwnd, iv.CwndBytes)
			m.RTT = append(m.RTT, iv.RTTUs)
			m.CwndBytes += iv.CwndBytes
			m.RTTUs += iv.RTTUs
		}
	}
	if !workload.Finite(m.Retransmits...) {
		return m, errors.New("iperf3 report has a non-finite retransmit count")
	}
	if !(m.Seconds > 0) || !workload.Finite(m.Bytes, m.Seconds) || m.Bytes < 0 {
		return m, fmt.Errorf("iperf3 report has an invalid measured window (%v bytes in %v s)", m.Bytes, m.Seconds)
	}
	m.Bitrate = m.Bytes * 8 / m.Seconds
	if m.UDP != nil {
		m.UDP.JitterMs = jit / nj
		if m.UDP.Packets > 0 {
			m.UDP.LostPercent = 100 * m.UDP.LostPackets / m.UDP.Packets
		}
		if !workload.Finite(m.UDP.JitterMs, m.UDP.LostPackets, m.UDP.Packets, m.UDP.LostPercent) {
			return m, errors.New("iperf3 report has non-finite UDP counters")
		}
	}
	if n := float64(len(m.Cwnd)); n > 0 {
		m.CwndBytes /= n
		m.RTTUs /= n
		m.HasTCPInfo = true
	}
	return m, nil
}

// window returns the non-omitted intervals without the trailing drain
// (the same rule measure applies).
func window(ivs []Interval, duration float64) []Interval {
	var m []Interval
	for _, iv := range ivs {
		if !iv.Omitted {
			m = append(m, iv)
		}
	}
	if len(m) > 1 {
		last := m[len(m)-1]
		longest := 0.0
		for _, iv := range m {
			longest = max(longest, iv.Seconds)
		}
		if duration > 0 && last.Start >= duration-endSlack || duration <= 0 && last.Seconds < partialFraction*longest {
			m = m[:len(m)-1]
		}
	}
	return m
}
