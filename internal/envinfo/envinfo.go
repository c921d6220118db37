// Package envinfo records the machine a run ran on: kernel, CPU model and
// count, NUMA nodes and tool versions, for env.json.
package envinfo

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
	"github.com/cnibench/cnibench/internal/topology"
)

// Collect fills the machine part of results.Env. Missing facts are left
// empty: the environment is documentation, never a reason to fail a run.
func Collect(tools []string) results.Env {
	var e results.Env
	e.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		e.Kernel = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
	}
	e.CPUModel = CPUModel("/proc/cpuinfo")
	e.CPUs = len(hostcpus.Machine())
	e.NUMANodes = numaNodes("/sys")
	e.CPUIdle = cpuidle.Machine(sysfs.Dir("/sys"))
	if e.CPUIdle != nil {
		e.CPUIdle.Limits = cpuidle.ReadLimits(sysfs.Dir("/sys"), "/dev/cpu_dma_latency")
	}
	e.Tools = map[string]string{"go": runtime.Version()}
	for _, t := range tools {
		if v := ToolVersion(t); v != "" {
			e.Tools[t] = v
		}
	}
	return e
}

// CPUModel names the machine's CPU from its cpuinfo file (/proc/cpuinfo:
// the machine's whatever namespace reads it, so a node's agent reads its
// node's); "" when it cannot be read.
func CPUModel(cpuinfo string) string {
	f, err := os.Open(cpuinfo)
	if err != nil {
		return ""
	}
	defer f.Close()
	return parseCPUModel(f)
}

// parseCPUModel names the CPU a /proc/cpuinfo text describes: its first
// "model name" (x86; 32-bit ARM). An arm64 kernel prints none, only
// each CPU's "CPU implementer" and "CPU part" codes
// (arch/arm64/kernel/cpuinfo.c), so there the distinct pairs are named
// in order ("CPU implementer 0x41 part 0xd0c"), several on a big.LITTLE
// machine: without them env.json had no CPU model at all, and two arm64
// machines could not be told apart. "" when the text names neither.
func parseCPUModel(r io.Reader) string {
	var parts []string
	implementer := ""
	s := bufio.NewScanner(r)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case v == "":
		case k == "model name":
			return v
		case k == "CPU implementer":
			implementer = v
		case k == "CPU part":
			p := "CPU part " + v
			if implementer != "" {
				p = "CPU implementer " + implementer + " part " + v
			}
			if !slices.Contains(parts, p) {
				parts = append(parts, p)
			}
		}
	}
	return strings.Join(parts, ", ")
}

// ToolVersion returns the first line a tool prints for --version, or ""
// when the tool is missing.
func ToolVersion(tool string) string {
	return Version([]string{tool, "--version"})
}

// versionTimeout bounds a version query: `TOOL --version` answers in
// milliseconds; five seconds leaves room for a cold disk cache. A
// variable for the test.
var versionTimeout = 5 * time.Second

// Version returns the first line argv prints (on stdout or stderr: nginx
// -v writes there), or "" when the program is missing.
func Version(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return ""
	}
	// A version query prints a line at once; a program that hangs instead
	// (a wrapper waiting on a terminal) must not hold the run's start.
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.WaitDelay = time.Second
	netns.KillGroupOnCancel(cmd)
	out, _ := cmd.CombinedOutput()
	line, _, _ := bytes.Cut(out, []byte("\n"))
	return strings.TrimSpace(string(line))
}

// numaNodes counts the NUMA nodes under sysRoot that have online CPUs,
// as the inspection and the placements count them (topology: a
// memory-only node, CXL or a GPU's memory, holds none, and counting it
// would say placements on one socket's CPUs could differ by NUMA node).
// At least 1: a machine whose topology cannot be read is one node.
func numaNodes(sysRoot string) int {
	t, err := topology.Read(sysRoot)
	if err != nil {
		return 1
	}
	return max(t.Nodes(), 1)
}
