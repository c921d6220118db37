// Package envinfo records the machine a run ran on: kernel, CPU model and
// count, NUMA nodes and tool versions, for env.json.
package envinfo

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
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
	e.CPUModel = cpuModel()
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

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
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
