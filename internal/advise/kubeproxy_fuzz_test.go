package advise

import (
	"regexp"
	"strconv"
	"testing"
)

// releaseRE is how a kernel release begins (/proc/sys/kernel/osrelease,
// uname -r: the Makefile's VERSION.PATCHLEVEL, then .SUBLEVEL and the
// local version, which may begin with anything but a digit).
var releaseRE = regexp.MustCompile(`^([0-9]+)\.([0-9]+)([^0-9]|$)`)

// kernelRE is a release as the kernel's Makefile builds it: the minor is
// followed by .SUBLEVEL, or an EXTRAVERSION or local version, which
// begin with "-" or "+" ("6.8.0-45-generic", "6.12.9+bpo-amd64").
var kernelRE = regexp.MustCompile(`^[0-9]+\.[0-9]+([.+-]|$)`)

// FuzzParseKernel: the release comes from a node's /proc (an inspection,
// which may be a file from another machine). parseKernel accepts one
// only where it begins as the kernel's do, major.minor, and returns
// exactly major*100+minor; every release the kernel's Makefile can build
// with a minor below 100 and a major of a few digits is accepted.
func FuzzParseKernel(f *testing.F) {
	for _, s := range []string{"6.8.0-45-generic", "6.1.0-25-amd64", "5.15.0-119-generic", "6.18.44", "6.12.9+bpo-amd64",
		"6.18.44-fc-v595", "5.4.0-1103-aws", "4.19.0+", "6.8", "weird", "", "6", "6.100.1",
		"6-8", ".6.8", "--6..8", "922337203685477580.7-x", "+6.8", "6.+8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, release string) {
		v, err := parseKernel(release)
		m := releaseRE.FindStringSubmatch(release)
		if err != nil {
			if m != nil && len(m[1]) <= 4 && len(m[2]) <= 2 && kernelRE.MatchString(release) {
				t.Errorf("parseKernel(%q) refused a major.minor release: %v", release, err)
			}
			return
		}
		if m == nil {
			t.Fatalf("parseKernel(%q) = %d: the release does not begin with major.minor", release, v)
		}
		major, err1 := strconv.Atoi(m[1])
		minor, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil || v < 0 || v/100 != major || v%100 != minor {
			t.Errorf("parseKernel(%q) = %d, want %s*100+%s", release, v, m[1], m[2])
		}
	})
}
