package iperf3

import (
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

const (
	// MaxParallel is iperf3's own limit on -P (streams per client); it
	// also bounds background connections per pair.
	MaxParallel = 128
	// MaxLength is iperf3's own limit on -l (MAX_BLOCKSIZE, 1 MiB) and
	// MaxDatagram its limit for UDP (MAX_UDP_BLOCKSIZE: 65535 less the
	// IP and UDP headers).
	MaxLength   = 1 << 20
	MaxDatagram = 65535 - 20 - 8
	// MinDatagram is iperf3's smallest UDP block (MIN_UDP_BLOCKSIZE:
	// its sequence number and timestamp; 3.12 refuses -u -l 15 with
	// "block size invalid (minimum = 16 bytes...)"); a TCP block may be
	// 1 B.
	MinDatagram = 16
	// MaxOmit is iperf3's own limit on -O (MAX_OMIT_TIME, 60 s: 3.12
	// refuses -O 61 with "bogus value for --omit"); the warm-up is -O.
	// iperf3 3.18 raised it to 600 s (iperf.h); the bound is the older
	// one, Debian 12's, as a study runs wherever its iperf3 is (a
	// cluster's image too), and a warm-up of a minute is already long.
	MaxOmit = 60 * time.Second
)

var (
	tcp = []string{"tcp"}
	udp = []string{"udp"}
)

// Describe says what iperf3 takes and reports (see package spec).
func (d *Driver) Describe() spec.Tool {
	return spec.Tool{
		Name:      "iperf3",
		Protocols: []string{"tcp", "udp"},
		Options: append([]spec.Option{
			{Name: study.OptLength, Sweep: study.OptLengths, Doc: "the write and read size (iperf3 -l)",
				Unset: "iperf3's own: 128 KiB for TCP, the path MTU's payload for UDP",
				Min:   1, Max: MaxLength, MinFor: map[string]int{"udp": MinDatagram}, MaxFor: map[string]int{"udp": MaxDatagram},
				Note: "iperf3's bounds on -l: a UDP datagram carries at least its 16-byte sequence number and timestamp and at most 65507 B, a TCP block at most 1 MiB"},
			{Name: study.OptRate, Sweep: study.OptRates, Doc: "an offered bitrate", Unset: "unlimited for TCP",
				RequiredFor: udp, OrInstead: []string{study.OptLossCeiling}, Note: "iperf3's UDP default of 1 Mbit/s measures nothing"},
			{Name: study.OptParallel, Sweep: study.OptParallels, Doc: "streams per client (iperf3 -P)", Unset: "one stream",
				Min: 1, Max: MaxParallel, Note: "iperf3's limit on -P"},
			{Name: study.OptReverse, Doc: "the server sending (iperf3 -R)", Unset: "the client sends"},
			{Name: study.OptMSS, Sweep: study.OptMSSes, Doc: "the TCP maximum segment size (iperf3 -M)",
				Unset: "the path MTU's (MTU - 40)", Min: study.MinMSS, Max: 65535 - study.MSSHeaders, OnlyFor: tcp,
				Note: "Linux refuses a TCP MSS below 88 B; a segment carries at most MTU - 40 B, checked against each datapath's MTU"},
			{Name: study.OptLossCeiling, Doc: "a loss ceiling (3%) the offered rate is searched under before the measured trial",
				Unset: "the offered rate is the study's rate", OnlyFor: udp, Note: "TCP does not lose what it is offered"},
			{Name: study.OptCeilingSrch, Doc: "the loss-ceiling search's low, high, step, probe and sender",
				Unset: "1M..10G per stream, step 1% of high, 2 s probes, iperf3 as the sender", OnlyFor: udp,
				Note: "it tunes lossCeiling, a UDP option"},
			{Name: study.OptSender, Doc: "what offers the UDP load: iperf3's client, or pktgen, the kernel's packet generator in each client pod (each server pod with reverse; parallel streams as -P, each at the rate; the local engine only)",
				Unset: "iperf3", OnlyFor: udp, Note: "TCP's sender is its connection"},
			{Name: study.OptBackground, Doc: "capped TCP connections on extra pairs beside the measured one", Unset: "no background load"},
		}, workload.CommonOptions()...),
		// The client sends (a UDP sender, iperf3's or pktgen's, too),
		// the server with reverse (-R; pktgen in the server pods).
		Data:         spec.Data{Flow: spec.ClientToServer, ReversedBy: study.OptReverse, Sender: "the client sends", Back: "its ACKs"},
		Programs:     []spec.Program{{Name: "iperf3", Package: "iperf3", Version: []string{"iperf3", "--version"}}},
		MaxWarmup:    MaxOmit,
		WarmupOption: "iperf3's --omit",
		Headline: []spec.Metric{
			{Name: results.MetricBitrate},
			{Name: MetricOffered, Protocols: udp},
			{Name: MetricLostPct, Protocols: udp},
			{Name: MetricJitter, Protocols: udp},
			{Name: MetricRTT, Protocols: tcp},
			{Name: MetricBackgroundBitrate, Protocols: tcp},
		},
		// pktgen's refusal on a cluster is workload.Prepare's (it needs
		// this machine's namespaces); everything else runs there.
		Kube: spec.Kube{Support: spec.KubeAll},
	}
}
