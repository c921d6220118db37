package advise

import (
	"errors"
	"strconv"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// The conntrack table's size and its hash. Documentation/networking/
// nf_conntrack-sysctl.rst: nf_conntrack_max "is set to
// nf_conntrack_buckets by default" and, as every entry is hashed twice
// (original and reply direction), "a maxed-out table will have a average
// hash chain length of 2" (the commit that set that default,
// d532bcd0b269 "netfilter: conntrack: sanitize table size default
// settings", notes that a chain of 1 would take twice as many buckets as
// entries). Doubling the maximum without the buckets doubles the chains
// a full table's lookups walk, so conntrack-size raises both, keeping
// the default ratio. On Kubernetes, kube-proxy sets
// nf_conntrack_max itself when it starts, to max(conntrack.maxPerCore ×
// CPUs, conntrack.min) (cmd/kube-proxy getConntrackMax; maxPerCore 32768
// and min 131072 by default), and raises the module's hashsize to a
// quarter of it where smaller: a sysctl.d value is overwritten there, and
// kube-proxy's configuration is the place to change it.

// conntrackTarget is the maximum proposed: twice the current one.
func conntrackTarget(in *inspect.Inspection) (int64, error) {
	m, ok := in.Sysctls[inspect.SysConntrackMax]
	if !ok || m <= 0 {
		return 0, errors.New("nf_conntrack_max unknown")
	}
	return 2 * m, nil
}

// conntrackBuckets is {conntrack_buckets}: as many hash buckets as the
// new maximum (the kernel's default ratio), or the current count where
// that is already more.
func conntrackBuckets(in *inspect.Inspection) (string, error) {
	t, err := conntrackTarget(in)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(max(t, in.Sysctls[inspect.SysConntrackBuckets]), 10), nil
}

// conntrackBucketsNow is {conntrack_buckets_now}: the buckets the table
// has, or "an unknown number of" where they were not read.
func conntrackBucketsNow(in *inspect.Inspection) string {
	if b, ok := in.Sysctls[inspect.SysConntrackBuckets]; ok && b > 0 {
		return strconv.FormatInt(b, 10)
	}
	return "an unknown number of"
}

// conntrackPerCore is {conntrack_per_core}: kube-proxy's
// conntrack.maxPerCore that gives the new maximum on this node's CPUs.
func conntrackPerCore(in *inspect.Inspection) (string, error) {
	t, err := conntrackTarget(in)
	if err != nil {
		return "", err
	}
	if in.CPUs <= 0 {
		return "", errors.New("CPU count unknown")
	}
	n := int64(in.CPUs)
	return strconv.FormatInt((t+n-1)/n, 10), nil
}
