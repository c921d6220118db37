package calicopod

import "testing"

// TestChecksumOffloadBrokenAsFelix: Felix v3.29.7 takes checksum offload
// to be broken up to kernel 5.7.0 itself and fixed after it, reading a
// release as its version parser does (three numbers and a fourth after
// a dash, a longer version the larger where they agree), and an
// unreadable one as 3.10.0. Releases carry three numbers (uname -r:
// VERSION.PATCHLEVEL.SUBLEVEL and an EXTRAVERSION).
func TestChecksumOffloadBrokenAsFelix(t *testing.T) {
	for _, tc := range []struct {
		release string
		broken  bool
	}{
		{"4.15.0-213-generic", true},       // Ubuntu 18.04
		{"4.18.0-553.el8_10.x86_64", true}, // RHEL 8, read as 4.18.0-553
		{"5.4.0-150-generic", true},
		{"5.6.19", true},
		{"5.7.0", true},            // Felix's "<= 0": 5.7.0 itself counts as broken
		{"5.7.0-1-generic", false}, // read as 5.7.0-1, past 5.7.0
		{"5.7.1", false},
		{"5.8.0-63-generic", false},
		{"6.1.0-18-amd64", false}, // Debian 12
		{"6.18.44-fc-v1300", false},
		{"", true}, // unreadable: Felix's 3.10.0
		{"linux", true},
		{"6.1", true},                      // not three numbers: unreadable to Felix
		{"99999999999999999999.0.0", true}, // past int: unreadable
	} {
		if got := ChecksumOffloadBroken(tc.release); got != tc.broken {
			t.Errorf("ChecksumOffloadBroken(%q) = %v, want %v", tc.release, got, tc.broken)
		}
	}
}
