package iperf3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/workload"
)

// Report is what both ends of an iperf3 test print with -J, reduced to
// what cnibench uses.
type Report struct {
	Version  string // "iperf 3.12"
	Protocol string // "TCP" or "UDP"
	Streams  int    // -P
	Omit     int    // -O, seconds
	Duration int    // -t, seconds
	Reverse  bool   // -R: the server sent
	// TargetBitrate is -b per stream, bit/s (0 = unlimited).
	TargetBitrate float64
	// OutOfOrder is the sum of end.streams[].udp.out_of_order (UDP
	// receiver only; iperf3 subtracts the omitted warm-up's count itself,
	// omitted_out_of_order, so it covers the measured time).
	OutOfOrder float64
	// Intervals are the per-interval sums over streams, omitted ones
	// included, in order.
	Intervals []Interval
}

// Interval is one reporting interval summed over streams. Times are
// seconds since the start of the test (iperf3 restarts at 0 when the
// omitted warm-up ends).
type Interval struct {
	Start, End, Seconds float64
	Bytes               float64
	Omitted             bool
	// Sender tells whether the printing end sent the data.
	Sender bool
	UDP    *UDPStats // UDP tests only
	// CwndBytes and RTTUs are the sender's snd_cwnd (bytes) and smoothed
	// RTT (µs) averaged over its TCP streams; TCPInfo says whether the
	// printing end had them (only the sender of a TCP test does).
	CwndBytes, RTTUs float64
	TCPInfo          bool
	// Retransmits is the interval's sum.retransmits, printed by the
	// sender of a TCP test on Linux; HasRetransmits says it was there.
	Retransmits    float64
	HasRetransmits bool
}

// UDPStats are the receiver's UDP counters.
type UDPStats struct {
	JitterMs    float64
	LostPackets float64
	Packets     float64
	LostPercent float64
}

// Server is the server's view of a test.
type Server struct {
	Report
	// MeasuredBytes over MeasuredSeconds is the measured window: the
	// non-omitted intervals without the trailing partial one.
	MeasuredBytes   float64
	MeasuredSeconds float64
	// Bitrate is MeasuredBytes*8/MeasuredSeconds, bit/s.
	Bitrate float64
	// UDP is the server's end-of-test receiver summary (UDP tests only).
	UDP *UDPStats
}

// Client is the client's view of a test.
type Client struct {
	Report
	// SenderBitrate is end.sum_sent.bits_per_second: what the sender
	// wrote over the measured (non-omitted) time.
	SenderBitrate float64
	SenderBytes   float64
	// ReceiverBitrate is end.sum_received.bits_per_second as the server
	// reported it back to the client.
	ReceiverBitrate float64
	// Retransmits is end.sum_sent.retransmits (TCP; 0 when absent).
	Retransmits float64
	// SentPackets is end.sum_sent.packets of a UDP client: the datagrams
	// it sent (0 when absent or not a plausible count).
	SentPackets float64
	// UDP is end.sum of a UDP test (loss and jitter at the receiver).
	UDP *UDPStats
}

// The server's last interval is usually a drain of a few ms that starts
// when the test's nominal time is over and ends when the client's end
// message arrives; bytes over such a tiny time are noise, so it is left
// out. It is recognised by its start (at or after the -t duration, give or
// take endSlack) rather than by its length: under CPU contention the
// server's timers fire late and a short interval holding real data can
// appear before the end. Reports without a duration fall back to length:
// shorter than partialFraction of the longest measured interval.
const (
	endSlack        = 0.001 // s
	partialFraction = 0.5
)

// ParseServer reads the JSON an iperf3 server printed (iperf3 -s -J) and
// computes the bitrate over the measured window. When iperf3 reported an
// error, it returns a *ToolError.
func ParseServer(data []byte) (*Server, error) {
	raw, err := decode(data)
	if err != nil {
		return nil, err
	}
	s := &Server{Report: raw.report()}
	s.MeasuredBytes, s.MeasuredSeconds, err = measure(s.Intervals, float64(s.Duration))
	if err != nil {
		return nil, err
	}
	s.Bitrate = s.MeasuredBytes * 8 / s.MeasuredSeconds
	if !workload.Finite(s.Bitrate) {
		return nil, errors.New("iperf3 server report has a non-finite bitrate")
	}
	if raw.End.Sum != nil {
		s.UDP = raw.End.Sum.udp()
	}
	return s, nil
}

// ParseClient reads the JSON an iperf3 client printed (iperf3 -c -J).
// When iperf3 reported an error, it returns a *ToolError.
func ParseClient(data []byte) (*Client, error) {
	raw, err := decode(data)
	if err != nil {
		return nil, err
	}
	sent := raw.End.SumSent
	if sent == nil {
		return nil, errors.New("iperf3 client report has no end.sum_sent")
	}
	c := &Client{
		Report:        raw.report(),
		SenderBitrate: sent.BitsPerSecond,
		SenderBytes:   sent.Bytes,
	}
	if sent.Retransmits != nil {
		c.Retransmits = *sent.Retransmits
	}
	// An overflowed counter reads as about 1.8e19 (see raw): not a count.
	if p := sent.Packets; p != nil && *p >= 0 && *p < 1<<53 {
		c.SentPackets = *p
	}
	if r := raw.End.SumReceived; r != nil {
		c.ReceiverBitrate = r.BitsPerSecond
	}
	if raw.End.Sum != nil {
		c.UDP = raw.End.Sum.udp()
	}
	if !workload.Finite(c.SenderBitrate, c.SenderBytes, c.ReceiverBitrate, c.Retransmits) {
		return nil, errors.New("iperf3 client report has a non-finite number")
	}
	return c, nil
}

// measure sums the non-omitted intervals, without the trailing drain.
// duration is the test's -t in seconds, 0 when unknown.
func measure(ivs []Interval, duration float64) (bytes, seconds float64, err error) {
	var m []Interval
	for _, iv := range ivs {
		if !iv.Omitted {
			m = append(m, iv)
		}
	}
	if len(m) == 0 {
		return 0, 0, errors.New("iperf3 report has no measured interval (the test ended within the warm-up)")
	}
	if last := m[len(m)-1]; len(m) > 1 {
		longest := 0.0
		for _, iv := range m {
			longest = max(longest, iv.Seconds)
		}
		if duration > 0 && last.Start >= duration-endSlack || duration <= 0 && last.Seconds < partialFraction*longest {
			m = m[:len(m)-1]
		}
	}
	for _, iv := range m {
		bytes += iv.Bytes
		seconds += iv.Seconds
	}
	if !(seconds > 0) || !workload.Finite(bytes, seconds) || bytes < 0 {
		return 0, 0, fmt.Errorf("iperf3 report has an invalid measured window (%v bytes in %v s)", bytes, seconds)
	}
	return bytes, seconds, nil
}

// raw mirrors the part of iperf3's JSON we read. Numbers are float64
// because iperf3 prints counters that overflowed as huge unsigned values
// (3.12 prints packets 18446744073709551234 in a UDP server's sum_sent).
type raw struct {
	Start struct {
		Version   string `json:"version"`
		TestStart struct {
			Protocol   string  `json:"protocol"`
			NumStreams float64 `json:"num_streams"`
			Omit       float64 `json:"omit"`
			Duration   float64 `json:"duration"`
			Reverse    float64 `json:"reverse"`
			Target     float64 `json:"target_bitrate"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Sum     *rawSum     `json:"sum"`
		Streams []rawStream `json:"streams"`
	} `json:"intervals"`
	End struct {
		Streams []struct {
			UDP *struct {
				OutOfOrder float64 `json:"out_of_order"`
			} `json:"udp"`
		} `json:"streams"`
		SumSent     *rawSum `json:"sum_sent"`
		SumReceived *rawSum `json:"sum_received"`
		Sum         *rawSum `json:"sum"` // UDP
	} `json:"end"`
	Error string `json:"error"`
}

type rawSum struct {
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Seconds       float64  `json:"seconds"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	Omitted       bool     `json:"omitted"`
	Sender        bool     `json:"sender"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *float64 `json:"lost_packets"`
	Packets       *float64 `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
}

// rawStream is one stream of an interval; snd_cwnd and rtt are printed
// by the sender of a TCP test only.
type rawStream struct {
	SndCwnd *float64 `json:"snd_cwnd"`
	RTT     *float64 `json:"rtt"`
}

func (s *rawSum) udp() *UDPStats {
	if s.JitterMs == nil && s.LostPackets == nil && s.Packets == nil {
		return nil
	}
	u := &UDPStats{}
	for _, f := range []struct {
		dst *float64
		src *float64
	}{{&u.JitterMs, s.JitterMs}, {&u.LostPackets, s.LostPackets}, {&u.Packets, s.Packets}, {&u.LostPercent, s.LostPercent}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return u
}

func (r *raw) report() Report {
	ts := r.Start.TestStart
	rep := Report{
		Version:  r.Start.Version,
		Protocol: ts.Protocol,
		Streams:  int(ts.NumStreams),
		Omit:     int(ts.Omit),
		Duration: int(ts.Duration),
		Reverse:  ts.Reverse != 0,

		TargetBitrate: ts.Target,
	}
	for _, st := range r.End.Streams {
		if st.UDP != nil {
			rep.OutOfOrder += st.UDP.OutOfOrder
		}
	}
	for _, iv := range r.Intervals {
		if iv.Sum == nil {
			continue
		}
		s := iv.Sum
		i := Interval{Start: s.Start, End: s.End, Seconds: s.Seconds, Bytes: s.Bytes, Omitted: s.Omitted, Sender: s.Sender}
		if s.Retransmits != nil {
			i.Retransmits, i.HasRetransmits = *s.Retransmits, true
		}
		if strings.EqualFold(rep.Protocol, "UDP") {
			i.UDP = s.udp()
		}
		var n float64
		for _, st := range iv.Streams {
			if st.SndCwnd != nil && st.RTT != nil {
				i.CwndBytes += *st.SndCwnd
				i.RTTUs += *st.RTT
				n++
			}
		}
		if n > 0 {
			i.CwndBytes /= n
			i.RTTUs /= n
			i.TCPInfo = true
		}
		rep.Intervals = append(rep.Intervals, i)
	}
	return rep
}

// decode parses the JSON and turns iperf3's "error" field into a
// *ToolError. Anything before the first '{' (a stray warning line) is
// skipped.
func decode(data []byte) (*raw, error) {
	i := bytes.IndexByte(data, '{')
	if i < 0 {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, errors.New("iperf3 printed no JSON report")
		}
		return nil, fmt.Errorf("iperf3 printed no JSON report: %q", workload.Clip(string(data), 200))
	}
	var r raw
	if err := json.Unmarshal(data[i:], &r); err != nil {
		return nil, fmt.Errorf("parse iperf3 JSON report: %w", err)
	}
	if r.Error != "" {
		return nil, newToolError(r.Error)
	}
	return &r, nil
}
