package registry

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

func TestLookup(t *testing.T) {
	d, err := Lookup("iperf3")
	if err != nil || d.Describe().Name != "iperf3" {
		t.Fatalf("Lookup(iperf3) = %v, %v", d, err)
	}
	_, err = Lookup("netperf")
	if !errors.Is(err, workload.ErrUnknownTool) || !strings.Contains(err.Error(), "known: ") || !strings.Contains(err.Error(), "iperf3") {
		t.Errorf("Lookup(netperf) error = %v", err)
	}
}

// TestDescriptionsComplete fails when a registered driver lacks any part
// of its description: name, protocols, options with defaults, programs
// with Debian packages and version argv, headline metrics for each
// protocol, kube support; or names an option study files cannot set.
func TestDescriptionsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Drivers() {
		desc := d.Describe()
		if err := desc.Check(); err != nil {
			t.Errorf("driver %T: %v", d, err)
		}
		if seen[desc.Name] {
			t.Errorf("tool %s registered twice", desc.Name)
		}
		seen[desc.Name] = true
		for _, o := range desc.Options {
			if !study.KnownOption(o.Name) || (o.Sweep != "" && !study.KnownOption(o.Sweep)) {
				t.Errorf("%s: option %q (sweep %q) is not a study.Workload field", desc.Name, o.Name, o.Sweep)
			}
			if err := study.CheckDefault(o); err != nil {
				t.Errorf("%s: %v", desc.Name, err)
			}
		}
	}
	if !slices.Equal(Tools()[0].Protocols, []string{"tcp", "udp"}) || Tools()[0].Name != "iperf3" {
		t.Errorf("Tools()[0] = %+v", Tools()[0])
	}
}

// TestCheckCatchesGaps removes each part of a complete description in
// turn: Check must fail every time, so TestDescriptionsComplete can fail.
func TestCheckCatchesGaps(t *testing.T) {
	full, _ := Describe("iperf3")
	if err := full.Check(); err != nil {
		t.Fatalf("iperf3: %v", err)
	}
	gaps := map[string]func(*spec.Tool){
		"name":             func(d *spec.Tool) { d.Name = "" },
		"protocols":        func(d *spec.Tool) { d.Protocols = nil },
		"options":          func(d *spec.Tool) { d.Options = nil },
		"option default":   func(d *spec.Tool) { d.Options[0].Unset, d.Options[0].Default = "", "" },
		"option doc":       func(d *spec.Tool) { d.Options[0].Doc = "" },
		"bounds note":      func(d *spec.Tool) { d.Options[2].Note = "" },
		"programs":         func(d *spec.Tool) { d.Programs = nil },
		"debian package":   func(d *spec.Tool) { d.Programs[0].Package = "" },
		"version argv":     func(d *spec.Tool) { d.Programs[0].Version = nil },
		"option program":   func(d *spec.Tool) { o, _ := d.Option(study.OptPin); o.Programs[0].Package = "" },
		"headline":         func(d *spec.Tool) { d.Headline = nil },
		"headline for udp": func(d *spec.Tool) { d.Headline = d.Headline[4:] },
		"kube":             func(d *spec.Tool) { d.Kube = spec.Kube{} },
		"kube some":        func(d *spec.Tool) { d.Kube = spec.Kube{Support: spec.KubeSome} },
		"warmup option":    func(d *spec.Tool) { d.WarmupOption = "" },
		"min for protocol": func(d *spec.Tool) { d.Options[0].MinFor = map[string]int{"tcp": 2 << 20} },
		"min duration why": func(d *spec.Tool) { d.MinDuration = time.Second },
		"data flow":        func(d *spec.Tool) { d.Data = spec.Data{} },
		"flow's sender":    func(d *spec.Tool) { d.Data.Sender = "" },
		"flow's reverser":  func(d *spec.Tool) { d.Data.ReversedBy = "backwards" },
		"task's flow":      func(d *spec.Tool) { d.Task, d.MaxWarmup, d.WarmupOption = true, 0, "" },
	}
	for name, gap := range gaps {
		d, _ := Describe("iperf3")
		gap(&d)
		if err := d.Check(); err == nil {
			t.Errorf("description without %s passes Check", name)
		}
	}
}

func studyCatalog() study.Catalog {
	return study.Catalog{Datapaths: catalog.Names(), Tools: Tools()}
}

// The built-in studies and study's fixtures resolve as study's own tests
// expect with the real descriptions, not only with study's stand-ins.
func TestStudiesWithRealDescriptions(t *testing.T) {
	for _, name := range study.Builtins() {
		if _, err := study.Resolve(name, study.Options{}, studyCatalog()); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
	valid, _ := filepath.Glob("../../study/testdata/valid-*.yaml")
	invalid, _ := filepath.Glob("../../study/testdata/invalid-*.yaml")
	if len(valid) == 0 || len(invalid) == 0 {
		t.Fatal("no study fixtures")
	}
	for _, f := range valid {
		if _, err := study.Resolve(f, study.Options{}, studyCatalog()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range invalid {
		if _, err := study.Resolve(f, study.Options{}, studyCatalog()); err == nil {
			t.Errorf("%s: want an error", f)
		}
	}
}

func TestPrograms(t *testing.T) {
	names := func(ps []spec.Program) string {
		var n []string
		for _, p := range ps {
			n = append(n, p.Name+"="+p.Package)
		}
		return strings.Join(n, ",")
	}
	w := study.Workload{Tool: "ab", Pin: &study.Pin{Server: "0"}, CPP: true}
	if got := names(Programs(w)); got != "ab=apache2-utils,nginx=nginx-light,taskset=util-linux,perf=linux-perf" {
		t.Errorf("Programs(ab pinned, cpp) = %s", got)
	}
	all := names(AllPrograms())
	for _, want := range []string{"iperf3=iperf3", "sockperf=sockperf", "nginx=nginx-light", "nft=nftables"} {
		if !strings.Contains(all, want) {
			t.Errorf("AllPrograms() = %s, lacks %s", all, want)
		}
	}
	if strings.Count(all, "taskset=") != 1 {
		t.Errorf("AllPrograms() repeats: %s", all)
	}
	// qperf runs on kube, so its image has it (and timeout, which stops
	// its server's per-test child).
	kubeProgs := names(KubePrograms())
	if !strings.Contains(all, "qperf=qperf") || !strings.Contains(kubeProgs, "qperf=qperf") || !strings.Contains(kubeProgs, "timeout=coreutils") || !strings.Contains(kubeProgs, "sockperf=sockperf") {
		t.Errorf("AllPrograms() = %s; KubePrograms() = %s", all, kubeProgs)
	}
}

func TestHeadlineAndKube(t *testing.T) {
	h := Headline()
	if h[0] != "bitrate" || !slices.Contains(h, "transactions_per_s") || !slices.Contains(h, "requests_per_s") {
		t.Errorf("Headline() = %v", h)
	}
	// Every listed tool runs whole on a cluster: background load (its
	// servers on their own pods' ports) and qperf (its second port) too.
	for _, w := range []study.Workload{
		{Name: "bg", Tool: "iperf3", Background: &study.Background{Connections: []int{0, 100}}},
		{Tool: "sockperf", MessageSizes: []int{14}}, {Tool: "qperf", MessageSize: 1},
	} {
		if got := KubeUnsupported(w); got != nil {
			t.Errorf("KubeUnsupported(%s) = %v", w.Tool, got)
		}
	}
	// A tool that says what it cannot run there is refused by name: the
	// whole tool, or an option of it, by its sweep's name too.
	none := spec.Tool{Name: "x", Kube: spec.Kube{Support: spec.KubeNone}}
	if got := kubeUnsupported(none, study.Workload{Tool: "x"}); len(got) != 1 || got[0] != "tool x does not run on a cluster" {
		t.Errorf("kubeUnsupported(none) = %v", got)
	}
	some, _ := Describe("iperf3")
	some.Kube = spec.Kube{Support: spec.KubeSome, Unsupported: map[string]string{study.OptMSS: "mss (why)"}}
	if got := kubeUnsupported(some, study.Workload{Tool: "iperf3", MSSes: []int{1000, 1400}}); len(got) != 1 || got[0] != "mss (why)" {
		t.Errorf("kubeUnsupported(some, msses) = %v", got)
	}
	if got := kubeUnsupported(some, study.Workload{Tool: "iperf3", Length: "128K"}); got != nil {
		t.Errorf("kubeUnsupported(some, length) = %v", got)
	}
}

// The repository's Dockerfile builds the kube image with apt-get; it must
// install the package of every program a driver may run there.
func TestDockerfileInstallsPrograms(t *testing.T) {
	b, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(strings.ReplaceAll(string(b), "\\", " "))
	for _, p := range KubePrograms() {
		if !slices.Contains(words, p.Package) {
			t.Errorf("Dockerfile does not install %s (for %s)", p.Package, p.Name)
		}
	}
}

// A warm-up iperf3 cannot take as -O (3.12 refuses -O 61: "bogus value
// for --omit") is refused at validation, with the real description's
// bound, before any node is built; 60 s is taken.
func TestWarmupBoundOfRealIperf3(t *testing.T) {
	src, _ := study.BuiltinSource("rps-rfs")
	_, err := study.Parse("rps-rfs", src, study.Options{Set: []string{"warmup=61s", "duration=2m"}}, studyCatalog())
	if err == nil || !strings.Contains(err.Error(), "spec.warmup: 1m1s is more than iperf3's --omit accepts (60s") {
		t.Errorf("warmup 61s: %v", err)
	}
	if _, err := study.Parse("rps-rfs", src, study.Options{Set: []string{"warmup=60s", "duration=2m"}}, studyCatalog()); err != nil {
		t.Errorf("warmup 60s: %v", err)
	}
}
