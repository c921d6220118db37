package wire

import (
	"math"
	"strings"
	"testing"
)

// TestShapeParams checks the tbf request against the kernel's rules
// (net/sched/sch_tbf.c tbf_change, tbf_enqueue): the peak rate exceeds
// the rate, tbf's largest packet min(burst, pburst) is one of the
// device's largest frames, so every GSO packet of two full segments is
// split and charged framing per segment while no frame is dropped, and
// the 64-bit attributes are sent when a rate does not fit 32 bits.
func TestShapeParams(t *testing.T) {
	for _, tc := range []struct {
		rate           uint64
		mtu            int
		burst          uint32
		rate64, peak64 bool
	}{
		{rate: 100_000_000, mtu: 1500, burst: 50_000, peak64: true},
		{rate: 1_000_000_000, mtu: 1500, burst: 500_000, peak64: true},
		{rate: 40_000_000_000, mtu: 1500, burst: 20_000_000, rate64: true, peak64: true},
		// Low rates: the bucket holds four of the largest frames.
		{rate: 1_000_000, mtu: 1500, burst: 4 * 1518},
		{rate: 1_000_000, mtu: 9000, burst: 4 * 9018},
	} {
		p, err := shapeParams(tc.rate, tc.mtu)
		if err != nil {
			t.Fatalf("rate %d mtu %d: %v", tc.rate, tc.mtu, err)
		}
		bps := tc.rate / 8
		peak := max(uint64(p.opt.Peakrate.Rate), p.peak64)
		rate := max(uint64(p.opt.Rate.Rate), p.rate64)
		if rate != bps || peak <= rate {
			t.Errorf("rate %d: rate %d B/s, peak %d B/s; want rate %d and a higher peak", tc.rate, rate, peak, bps)
		}
		if got := (p.rate64 != 0); got != tc.rate64 {
			t.Errorf("rate %d: TCA_TBF_RATE64 sent %v, want %v", tc.rate, got, tc.rate64)
		}
		if got := (p.peak64 != 0); got != tc.peak64 {
			t.Errorf("rate %d: TCA_TBF_PRATE64 sent %v, want %v", tc.rate, got, tc.peak64)
		}
		if p.burst != tc.burst {
			t.Errorf("rate %d mtu %d: burst %d, want %d", tc.rate, tc.mtu, p.burst, tc.burst)
		}
		maxSize := min(p.burst, p.peakBurst)
		if want := uint32(tc.mtu + 14 + 4); maxSize != want {
			t.Errorf("rate %d mtu %d: tbf's largest packet %d bytes, want the largest frame %d", tc.rate, tc.mtu, maxSize, want)
		}
		for _, rs := range []struct {
			name     string
			overhead uint16
			ll       uint8
		}{{"rate", p.opt.Rate.Overhead, p.opt.Rate.Linklayer}, {"peak", p.opt.Peakrate.Overhead, p.opt.Peakrate.Linklayer}} {
			if rs.overhead != FramingOverhead || rs.ll != 1 {
				t.Errorf("rate %d: %s overhead %d linklayer %d, want %d ethernet", tc.rate, rs.name, rs.overhead, rs.ll, FramingOverhead)
			}
		}
		if want := p.burst + uint32(bps/50); p.opt.Limit != want {
			t.Errorf("rate %d: limit %d, want %d", tc.rate, p.opt.Limit, want)
		}
	}
	for _, tc := range []struct {
		rate uint64
		mtu  int
		want string
	}{
		{7, 1500, "too low"},
		{math.MaxUint64, 1500, "too high"},
		{2_000_000_000_000, 1500, "too high"},
		{1_000_000_000, 0, "MTU 0"},
	} {
		if _, err := shapeParams(tc.rate, tc.mtu); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rate %d mtu %d: error %v, want one saying %q", tc.rate, tc.mtu, err, tc.want)
		}
	}
}

// TestShapeParamsChargePaddedFrames: a frame under Ethernet's minimum is
// padded to 60 bytes (64 with the FCS) on a wire, so the shaper charges
// it 84 with framing, as the kernel charges a packet (psched_l2t_ns:
// the overhead added, then the length raised to the mpu) on both
// buckets; a full frame pays its framing alone.
func TestShapeParamsChargePaddedFrames(t *testing.T) {
	p, err := shapeParams(1_000_000_000, 1500)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range []struct {
		name          string
		overhead, mpu uint16
	}{{"rate", p.opt.Rate.Overhead, p.opt.Rate.Mpu}, {"peak", p.opt.Peakrate.Overhead, p.opt.Peakrate.Mpu}} {
		charged := func(l int) int { return max(l+int(rs.overhead), int(rs.mpu)) }
		for _, c := range []struct {
			name        string
			frame, want int
		}{
			{"ARP request", 42, 84}, {"bare TCP ACK", 54, 84}, {"minimum frame", 60, 84}, {"full frame", 1514, 1538},
		} {
			if got := charged(c.frame); got != c.want {
				t.Errorf("%s bucket: %s (%d bytes) charged %d, want %d (overhead %d, mpu %d)", rs.name, c.name, c.frame, got, c.want, rs.overhead, rs.mpu)
			}
		}
	}
}
