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
	most, name := 1, ""
	for _, w := range variants {
		if w.Tool == toolName && w.Parallel > most {
			most, name = w.Parallel, w.Name
		}
	}
	if most == 1 {
		return ""
	}
	return fmt.Sprintf("iperf3 %s.%s runs a pair's parallel streams in one thread at each end (threads per stream came in %d.%d): "+
		"%s's %d streams are one core's work at each end, so a flows sweep levels off at one core's rate where separate "+
		"processes would scale with cores; install iperf3 %d.%d or later to measure them apart",
		m[1], m[2], ThreadedSince[0], ThreadedSince[1], name, most, ThreadedSince[0], ThreadedSince[1])
}
