// Package kerneltest holds the helpers every kernel test shares: skip
// without root, skip (or, inside the full-kernel VM, fail) without a
// datapath's features, test run IDs, and a dump of a namespace's wiring
// for failing tests. It depends on no engine, so the engine's own
// in-package tests and the datapath packages' tests can both use it.
package kerneltest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/nsprocs"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// RequireRoot skips a kernel test when not running as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: kernel test needs root (creates network namespaces)")
	}
}

// RequireFeatures skips when the machine lacks something d needs; a
// datapath whose features are there but which is broken must fail.
func RequireFeatures(t testing.TB, d datapath.Datapath) {
	t.Helper()
	if err := probe.Require(d.Features()...); err != nil {
		// The full-kernel VM (scripts/vm) has every kernel feature: a
		// missing one there is a broken probe or VM, not a reason to skip.
		var ue *probe.UnsupportedError
		if os.Getenv("CNIBENCH_IN_VM") != "" && errors.As(err, &ue) && ue.Kind == probe.KindKernel {
			t.Fatalf("in the full-kernel VM: datapath %s: %v", d.Name(), err)
		}
		t.Skipf("skipped: datapath %s: %v", d.Name(), err)
	}
}

// RequireKernel skips when the kernel lacks one of features (probe
// names); in the full-kernel VM a missing one fails the test instead.
func RequireKernel(t testing.TB, features ...string) {
	t.Helper()
	RequireRoot(t)
	if err := probe.Require(features...); err != nil {
		var ue *probe.UnsupportedError
		if os.Getenv("CNIBENCH_IN_VM") != "" && errors.As(err, &ue) && ue.Kind == probe.KindKernel {
			t.Fatalf("in the full-kernel VM: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

// RequireCNIPlugins skips when one of the reference CNI plugins is not
// installed, naming it and how to install it, or is a release too old to
// speak cnibench's CNI version (Debian 11's 0.9, read here apart from the
// probe under test); one that is there but that the probe refuses
// otherwise (no VERSION answer, an answer it cannot read) fails the test.
func RequireCNIPlugins(t testing.TB, plugins ...string) {
	t.Helper()
	for _, p := range plugins {
		if err := probe.Require(probe.CNIPlugin(p)); err != nil {
			bin := cniPluginFile(p)
			if bin == "" {
				t.Skipf("skipped: %v", err)
			}
			if vs := cniVersions(bin); len(vs) > 0 && !slices.Contains(vs, cniconf.Version) {
				t.Skipf("skipped: CNI plugin %s speaks CNI %s, not %s: %v", bin, strings.Join(vs, ", "), cniconf.Version, err)
			}
			t.Fatalf("CNI plugin %s is installed (%s), but: %v", p, bin, err)
		}
	}
}

// cniVersions are the CNI versions a plugin says it speaks (its VERSION
// answer's supportedVersions), none where it does not answer so.
func cniVersions(bin string) []string {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CNI_COMMAND=VERSION")
	cmd.Stdin = strings.NewReader(`{"cniVersion":"0.4.0"}`)
	out, err := cmd.Output()
	var v struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil {
		return nil
	}
	return v.SupportedVersions
}

// cniPluginFile is the first executable regular file named plugin in
// the plugin search path, found apart from the probe under test.
func cniPluginFile(plugin string) string {
	for _, d := range probe.CNIPath() {
		f := filepath.Join(d, plugin)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return f
		}
	}
	return ""
}

// RunID returns a test run id; namespaces are then "cnb-t<hex>-...",
// which the e2e leak checks and real run ids (plain hex) never confuse.
func RunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

// Journal opens a journal for a test's run in journal.DefaultDir, as a
// real run does, and closes it when the test ends (register it before the
// cluster, so it closes after): while the test runs, `cnibench cleanup`
// sees a live run and leaves its namespaces alone; if the test is killed,
// cleanup undoes what it made; and a test that ends with something still
// journaled (not removed) fails.
func Journal(t testing.TB, runID string) *journal.Journal {
	t.Helper()
	j, err := journal.Open(journal.DefaultDir, runID, prefix)
	if err != nil {
		t.Fatalf("journal of test run %s: %v", runID, err)
	}
	t.Cleanup(func() {
		if err := j.Close(); err != nil {
			t.Errorf("test run %s: %v", runID, err)
		}
	})
	return j
}

// Netns makes the throw-away namespace "cnb-<runID>-<name>", journaled
// in j before it exists, and when the test ends kills what still runs in
// it, deletes it and marks it removed. What a test started inside and
// did not stop (a t.Fatal before its Stop) would otherwise run on in the
// deleted namespace, unnamed and unseen by cleanup; a process that
// survives its SIGKILL fails the test, named, and the namespace is kept
// journaled for cleanup.
func Netns(t testing.TB, j *journal.Journal, runID, name string) string {
	t.Helper()
	ns := prefix + runID + "-" + name
	if err := j.RecordNetns(ns); err != nil {
		t.Fatal(err)
	}
	if err := netns.Add(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := killLeft(t, ns); err != nil {
			t.Errorf("namespace %s kept: %v", ns, err)
			return
		}
		if err := netns.Delete(ns); err != nil {
			t.Errorf("delete %s: %v", ns, err)
		} else if err := j.RemovedNetns(ns); err != nil {
			t.Error(err)
		}
	})
	return ns
}

// killLeft kills whatever still runs in the namespace ns, saying what it
// was.
func killLeft(t testing.TB, ns string) error {
	left, err := nsprocs.In(ns)
	if err != nil || len(left) == 0 {
		return err
	}
	var names []string
	for _, p := range left {
		names = append(names, fmt.Sprintf("%d (%s)", p.PID, nsprocs.Comm(p.PID)))
	}
	t.Logf("killing what the test left running in %s: %s", ns, strings.Join(names, ", "))
	_, err = nsprocs.KillAllIn(ns, nsprocs.DefaultTimeout)
	return err
}

// WaitCarrier waits until each named link in h's namespace is
// operationally up. Setting a veth up is not enough for a test's first
// packet: until link watching (which may wait up to a second, longer in
// an emulated VM) has seen the carrier and activated the device's queue,
// its qdisc is noop and drops what is sent. The kernel reports the
// operational state and activates the queue in one step under the rtnl
// lock, so a link read as up passes traffic.
func WaitCarrier(t testing.TB, h *netns.NetlinkHandle, devs ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, dev := range devs {
		for {
			l, err := h.LinkByName(dev)
			if err != nil {
				t.Fatal(err)
			}
			if l.Attrs().OperState == netlink.OperUp {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: operational state %s 10 s after it was set up", dev, l.Attrs().OperState)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// prefix is the local engine's namespace prefix (local.Prefix, which this
// package cannot import: the engine's tests import this package).
const prefix = "cnb-"

// Dump logs the links, addresses, routes, neighbours, FDB and tc ingress
// filters of a namespace, to explain a failed connectivity check.
func Dump(t testing.TB, ns string) {
	t.Helper()
	for _, args := range [][]string{{"-d", "link"}, {"addr"}, {"route"}, {"neigh"}} {
		out, _ := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
		t.Logf("ip -n %s %s:\n%s", ns, strings.Join(args, " "), out)
	}
	out, _ := exec.Command("bridge", "-n", ns, "fdb", "show").CombinedOutput()
	t.Logf("bridge -n %s fdb show:\n%s", ns, out)
	out, _ = exec.Command("tc", "-n", ns, "filter", "show", "ingress").CombinedOutput()
	t.Logf("tc -n %s filter show ingress:\n%s", ns, out)
}

// IdleLimits reads each CPU's PM QoS resume latency limit (what a
// cpuIdle tuning sets, cpuidle.LimitPath), for a test to compare before
// and after.
func IdleLimits(t testing.TB, cpus []int) []string {
	t.Helper()
	r := sysfs.Dir("/sys")
	var out []string
	for _, c := range cpus {
		v, err := r.Read(cpuidle.LimitPath(c))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// IdleBoundable says whether a cpuIdle bound of 0 would change how this
// machine's CPU 0 idles (it has idle states, the PM QoS limit's file and
// an enabled state slower than polling), and why not when it would not.
func IdleBoundable() (bool, string) {
	r := sysfs.Dir("/sys")
	st, err := cpuidle.States(r, 0)
	if err != nil {
		return false, err.Error()
	}
	if _, err := r.Read(cpuidle.LimitPath(0)); err != nil {
		return false, "no per-CPU PM QoS limit: " + err.Error()
	}
	if len(cpuidle.Slower(st, 0)) == 0 {
		return false, fmt.Sprintf("CPU 0 idles only in polling states (%v): a limit would change nothing", st)
	}
	return true, ""
}

// RequireIdleBound skips a test, saying why, where a cpuIdle bound of 0
// would change nothing here.
func RequireIdleBound(t testing.TB) {
	t.Helper()
	if ok, why := IdleBoundable(); !ok {
		t.Skip("skipping: " + why)
	}
}
