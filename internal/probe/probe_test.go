package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Features this test machine's kernel has (and most do). A probe that
// reports one of them missing while root is a bug: the test fails.
var expected = []string{Veth, Bridge, Vxlan, Macvlan, Tun, TBF, HTB, SocketLB, RPS, RFS}

// Features this test machine lacks; other kernels have them, so they are
// only logged.
var maybeMissing = []string{Netem, IFB, IPIP, GRE, Geneve, WireGuard, IPVlan, OpenvSwitch, IPVS, CPUIdle,
	CiliumBPF, Iptables, NFTables, Dummy, IPSet}

func TestProbeThisKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: probing kernel features needs root (scratch namespaces and devices)")
	}
	before := leftovers(t)
	res := probeAll(context.Background())
	logTable(t, res)
	checkLeftovers(t, before)
	byName := map[string]Result{}
	for _, r := range res {
		byName[r.Name] = r
	}
	if len(byName) != len(res) {
		t.Errorf("duplicate names in %v", res)
	}
	for _, n := range append(KernelFeatures(), Root, CapNetAdmin, CapSysAdmin, ToolEthtool, ToolChromium) {
		if _, ok := byName[n]; !ok {
			t.Errorf("no result for %s", n)
		}
	}
	for _, n := range expected {
		if r := byName[n]; !r.OK {
			t.Errorf("%s reported missing as root: %s", n, r.Detail)
		}
	}
	for _, r := range res {
		if !r.OK && r.Detail == "" {
			t.Errorf("%s is not OK and has no reason", r.Name)
		}
		if strings.Contains(r.Detail, "errno") {
			t.Errorf("%s: detail shows a bare errno: %s", r.Name, r.Detail)
		}
	}
	for _, n := range maybeMissing {
		r := byName[n]
		t.Logf("not asserted: %s ok=%v %s", n, r.OK, r.Detail)
	}
}

func TestRunCachesAndCleansUp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: probing kernel features needs root")
	}
	before := leftovers(t)
	a := Run(context.Background())
	b := Run(context.Background())
	if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("Run not stable: %v vs %v", a, b)
	}
	checkLeftovers(t, before)
	if ok, detail := Has(Veth); !ok {
		t.Errorf("Has(veth) = false, %s", detail)
	}
	if err := Require(Veth, Bridge); err != nil {
		t.Error(err)
	}
}

func TestCancelledRunIsNotCached(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, r := range probeAll(ctx) {
		if r.Kind == KindKernel && r.OK {
			t.Errorf("%s probed although cancelled", r.Name)
		}
	}
}

func leftovers(t *testing.T) []string {
	t.Helper()
	l, err := netns.List(NamespacePrefix)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// checkLeftovers fails if a scratch namespace not in before exists.
func checkLeftovers(t *testing.T, before []string) {
	t.Helper()
	for _, n := range leftovers(t) {
		if !slices.Contains(before, n) {
			t.Errorf("scratch namespace %s left behind", n)
		}
	}
}

func logTable(t *testing.T, res []Result) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %-9s %-3s %s\n", "NAME", "KIND", "OK", "DETAIL")
	for _, r := range res {
		ok := "no"
		if r.OK {
			ok = "yes"
		}
		if r.Optional {
			ok += "*"
		}
		fmt.Fprintf(&b, "%-14s %-9s %-3s %s\n", r.Name, r.Kind, ok, r.Detail)
	}
	t.Log(b.String())
}

func TestRequire(t *testing.T) {
	res := []Result{
		{Name: Veth, Kind: KindKernel, OK: true},
		{Name: IPIP, Kind: KindKernel, Detail: "creating an ipip device failed: operation not supported (kernel lacks the ipip module)"},
		{Name: GRE, Kind: KindKernel, Detail: "gre missing"},
		{Name: ToolEthtool, Kind: KindTool, Detail: "not found in PATH"},
	}
	if err := require(res, []string{Veth}); err != nil {
		t.Errorf("require(veth) = %v", err)
	}
	err := require(res, []string{Veth, IPIP})
	var ue *UnsupportedError
	if !errors.Is(err, ErrUnsupported) || !errors.As(err, &ue) || ue.Name != IPIP {
		t.Fatalf("require = %v, want the ipip error", err)
	}
	if want := "kernel feature ipip is not available: creating an ipip device failed: operation not supported (kernel lacks the ipip module)"; err.Error() != want {
		t.Errorf("message %q\nwant    %q", err, want)
	}
	// Every missing feature is named, not only the first: loading the
	// first one's module must not lead to a second refusal.
	err = require(res, []string{IPIP, Veth, GRE})
	if !errors.Is(err, ErrUnsupported) || !errors.As(err, &ue) || ue.Name != IPIP {
		t.Fatalf("require(ipip, veth, gre) = %v, want the ipip error first", err)
	}
	if want := "kernel feature ipip is not available: creating an ipip device failed: operation not supported (kernel lacks the ipip module); kernel feature gre is not available: gre missing"; err.Error() != want {
		t.Errorf("two missing: message %q\nwant                %q", err, want)
	}
	if err := require(res, []string{ToolEthtool}); err == nil || !strings.HasPrefix(err.Error(), "tool ethtool is not available") {
		t.Errorf("require(ethtool) = %v", err)
	}
	if err := require(res, []string{"nonsense"}); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("require(unknown) = %v, want a plain error", err)
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{unix.EOPNOTSUPP, "operation not supported (kernel lacks the ipip module)"},
		{fmt.Errorf("%w: Unknown device type", unix.EOPNOTSUPP), "operation not supported: Unknown device type (kernel lacks the ipip module)"},
		{unix.ENOENT, "no such file or directory (unknown kind: kernel lacks the ipip module)"},
		{unix.EPERM, "operation not permitted (a privilege issue, not a missing feature: run as root (needs CAP_NET_ADMIN))"},
		{unix.EINVAL, "invalid argument (the kernel rejected the request; most likely it lacks the ipip module)"},
		{unix.EPROTONOSUPPORT, "protocol not supported (kernel lacks the ipip module)"},
		{fmt.Errorf("wrapped: %w", unix.EEXIST), "wrapped: file exists (a device of that name already exists)"},
		{errors.New("plain"), "plain"},
	}
	for _, tt := range tests {
		if got := reason("ipip", tt.err); got != tt.want {
			t.Errorf("reason(%v) = %q\nwant %q", tt.err, got, tt.want)
		}
	}
	if got := failed("creating an ipip device", "ipip", unix.EOPNOTSUPP); got != "creating an ipip device failed: operation not supported (kernel lacks the ipip module)" {
		t.Errorf("failed = %q", got)
	}
}

func TestBPFLoadFailed(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("load program: %w", unix.EPERM), "privilege issue"},
		{fmt.Errorf("load program: %w (MEMLOCK may be too low, consider rlimit.RemoveMemlock)", unix.EPERM), "ulimit -l"},
		{fmt.Errorf("load program: %w", unix.ENOSYS), "CONFIG_BPF_SYSCALL"},
	} {
		if got := bpfLoadFailed(tt.err); !strings.Contains(got, tt.want) {
			t.Errorf("bpfLoadFailed(%v) = %q, want it to mention %q", tt.err, got, tt.want)
		}
	}
}

func TestBirdVersion(t *testing.T) {
	for _, tt := range []struct {
		version string
		ok      bool
	}{
		{"BIRD version 2.0.12", true},
		{"BIRD version 2.15.1", true},
		{"BIRD version 3.0.0", true},
		{"BIRD version 1.6.8", false},
		{"bird: unknown option --version", false},
		{"", false},
	} {
		why := birdVersion(tt.version)
		if (why == "") != tt.ok {
			t.Errorf("birdVersion(%q) = %q, want ok=%v", tt.version, why, tt.ok)
		}
	}
}

// TestToolPathAgreesWithProbe: a datapath that runs ToolPath's program
// runs the one doctor reported on.
func TestToolPathAgreesWithProbe(t *testing.T) {
	if _, err := ToolPath("no-such-tool"); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("ToolPath(unknown) = %v, want a plain error", err)
	}
	r := probeTool(context.Background(), toolSpecs[slices.IndexFunc(toolSpecs, func(s toolSpec) bool { return s.name == ToolBird })])
	p, err := ToolPath(ToolBird)
	if err != nil {
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "apt-get install bird2") {
			t.Errorf("ToolPath(bird) = %v, want an UnsupportedError with the install hint", err)
		}
		if r.OK {
			t.Errorf("probe found bird (%s) but ToolPath did not: %v", r.Detail, err)
		}
		return
	}
	if !strings.Contains(r.Detail, p) {
		t.Errorf("ToolPath(bird) = %s, probe says %q", p, r.Detail)
	}
	t.Logf("bird: ok=%v %s", r.OK, r.Detail)
}

// Programs runs each program's own version argv and names its Debian
// package when it is missing.
func TestPrograms(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = -V ] || exit 3\necho 'fake version 1.2'\n"
	if err := os.WriteFile(filepath.Join(dir, "cnbfake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	res := Programs(context.Background(), []spec.Program{
		{Name: "cnbfake", Package: "fake-pkg", Version: []string{"cnbfake", "-V"}},
		{Name: "cnbmissing", Package: "missing-pkg", Version: []string{"cnbmissing", "--version"}},
	})
	if len(res) != 2 || !res[0].OK || !strings.HasPrefix(res[0].Detail, "fake version 1.2 at ") || res[0].Kind != KindTool {
		t.Errorf("present program: %+v", res)
	}
	if len(res) == 2 && (res[1].OK || !strings.Contains(res[1].Detail, "apt-get install missing-pkg")) {
		t.Errorf("missing program: %+v", res[1])
	}
}

func TestScratchName(t *testing.T) {
	n := ScratchName(4711, 123456, "0a1b2c3d")
	if n != "cnbprobe-4711-123456-0a1b2c3d" {
		t.Errorf("ScratchName = %q", n)
	}
	if pid, start, ok := ParseScratchName(n); !ok || pid != 4711 || start != 123456 {
		t.Errorf("ParseScratchName(%q) = %d, %d, %v", n, pid, start, ok)
	}
	for _, bad := range []string{"cnbprobe-0a1b2c3d", "cnbprobe-4711-123456", "cnbprobe-0-1-x", "cnbprobe-+1-2-x",
		"cnbprobe-1-02-x", "cnb-4711-1-x", "cnbprobe-1-2-x-y", "cnbprobe-99999999999999999999-1-x"} {
		if pid, start, ok := ParseScratchName(bad); ok {
			t.Errorf("ParseScratchName(%q) = %d, %d, true", bad, pid, start)
		}
	}
}

func TestHostEffectNote(t *testing.T) {
	if n := hostEffectNote(GRE, nil); !strings.Contains(n, "loads module ip_gre") || !strings.Contains(n, "gre0, gretap0, erspan0") {
		t.Errorf("gre note = %q", n)
	}
	if n := hostEffectNote(Veth, []string{"tunl0"}); !strings.Contains(n, "added tunl0 to every network namespace") {
		t.Errorf("measured note = %q", n)
	}
	if n := hostEffectNote(Veth, nil); n != "" {
		t.Errorf("veth note = %q", n)
	}
	if got := newLinks(map[string]bool{"lo": true}, map[string]bool{"lo": true, "gre0": true, "erspan0": true}); fmt.Sprint(got) != "[erspan0 gre0]" {
		t.Errorf("newLinks = %v", got)
	}
}

// A run of a study whose datapaths need only veth, bridge and vxlan
// probes exactly those (never ipip, gre or openvswitch, whose modules add
// tunl0, gre0, ... to the host namespace), and leaves the host's links
// as they were.
func TestRequireProbesOnlyWhatIsAsked(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: probing kernel features needs root")
	}
	cache.Lock()
	byName, all, tried := cache.byName, cache.all, cache.kernelTried
	cache.byName, cache.all, cache.kernelTried = nil, nil, nil
	cache.Unlock()
	t.Cleanup(func() {
		cache.Lock()
		cache.byName, cache.all, cache.kernelTried = byName, all, tried
		cache.Unlock()
	})
	before := leftovers(t)
	links := hostLinks()
	if err := Require(Veth, Bridge, Vxlan); err != nil {
		t.Fatal(err)
	}
	if err := Require(Veth); err != nil { // cached: probes nothing more
		t.Fatal(err)
	}
	if got := KernelTried(); fmt.Sprint(got) != "[veth bridge vxlan]" {
		t.Errorf("probed %v, want [veth bridge vxlan]", got)
	}
	if added := newLinks(links, hostLinks()); len(added) > 0 {
		t.Errorf("probing added %v to the host namespace", added)
	}
	if gone := newLinks(hostLinks(), links); len(gone) > 0 {
		t.Errorf("probing removed %v from the host namespace", gone)
	}
	checkLeftovers(t, before)
}

// A tuning's sysctl is a feature: present when the kernel has it, and
// missing with the file and the name otherwise.
func TestSysctl(t *testing.T) {
	// Writable by root only: as anyone else the kernel refuses the
	// write, which the mode bits (0644) did not say.
	switch ok, why := Has(Sysctl("net.core.somaxconn")); {
	case os.Geteuid() == 0 && !ok:
		t.Errorf("net.core.somaxconn: %s", why)
	case os.Geteuid() != 0 && (ok || !strings.Contains(why, "may not write")):
		t.Errorf("net.core.somaxconn, not root: %v %q, want refused as not writable", ok, why)
	}
	ok, why := Has(Sysctl("net.core.no_such_knob"))
	if ok || !strings.Contains(why, "this kernel has no /proc/sys/net/core/no_such_knob") {
		t.Errorf("a missing sysctl: %v %q", ok, why)
	}
	// A slip names the sysctl meant.
	if ok, why := Has(Sysctl("net.core.somaxcon")); ok || !strings.HasPrefix(why, `did you mean "net.core.somaxconn"? `) {
		t.Errorf("a misspelt sysctl: %v %q", ok, why)
	}
	err := Require(Sysctl("net.core.no_such_knob"))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Require: %v", err)
	}
	if !IsKernel(Sysctl("net.core.busy_poll")) || !IsKernel(Netem) || IsKernel(ToolNft) {
		t.Error("IsKernel")
	}
}
