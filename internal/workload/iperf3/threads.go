package iperf3

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/cnibench/cnibench/internal/study"
)

// ThreadedSince is the first iperf3 release that runs each of a test's
// parallel streams (-P) in its own thread (3.16, 2023-12); before it one
// thread sends (or receives) them all, so N streams of one pair are one
// core's work at each end, where seed 001's flows were separate sender
// and receiver processes the scheduler spread over 16 cores.
var ThreadedSince = [2]int{3, 16}

// toolName is the driver's name in a study's workloads.
const toolName = "iperf3"

// versionRE finds "3.12" in iperf3 --version's first line, "iperf
// 3.12 (cJSON 1.7.15)".
var versionRE = regexp.MustCompile(`\biperf (\d+)\.(\d+)`)

// ImageThreadsNote is ThreadsNote for a cluster, whose iperf3 is the
// agent image's, of a version this machine does not read: the image the
// Dockerfile builds is Debian 12's, 3.12. "" where no workload runs
// parallel streams.
func ImageThreadsNote(variants []study.Workload) string {
	name, most := mostStreams(variants)
	if most == 1 {
		return ""
	}
	return fmt.Sprintf("the cluster's iperf3 is the image's: before %d.%d (the Dockerfile's Debian 12 image has 3.12) it runs a pair's parallel streams "+
		"in one thread at each end, so %s's %d streams are one core's work at each end and a flows sweep levels off at one core's rate",
		ThreadedSince[0], ThreadedSince[1], name, most)
}

// mostStreams is the iperf3 variant with the most parallel streams, and
// how many (1: none runs more than one).
func mostStreams(variants []study.Workload) (name string, most int) {
	most = 1
	for _, w := range variants {
		if w.Tool == toolName && w.Parallel > most {
			most, name = w.Parallel, w.Name
		}
	}
	return name, most
}

// ThreadsNote says, where the study's iperf3 workloads run parallel
// streams (more than 1 in one pair) and version (iperf3 --version's
// first line) is before ThreadedSince, that those streams share one
// thread per end: a flows sweep then levels off at one core's rate,
// which the paper's did not. "" otherwise, and for a version it cannot
// read.
func ThreadsNote(version string, variants []study.Workload) string {
	m := versionRE.FindStringSubmatch(version)
	if m == nil {
		return ""
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major > ThreadedSince[0] || major == ThreadedSince[0] && minor >= ThreadedSince[1] {
		return ""
	}
	name, most := mostStreams(variants)
	if most == 1 {
		return ""
	}
	return fmt.Sprintf("iperf3 %s.%s runs a pair's parallel streams in one thread at each end (threads per stream came in %d.%d): "+
		"%s's %d streams are one core's work at each end, so a flows sweep levels off at one core's rate where separate "+
		"processes would scale with cores; install iperf3 %d.%d or later to measure them apart",
		m[1], m[2], ThreadedSince[0], ThreadedSince[1], name, most, ThreadedSince[0], ThreadedSince[1])
}
