package report

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuild(t *testing.T) {
	dir, samples := syntheticDir(t)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))

	// One normalized figure plus idle and softirq at 1 and 16 replicas.
	if n := strings.Count(page, "<svg"); n < 5 {
		t.Errorf("%d <svg elements, want 5", n)
	}
	for _, want := range []string{
		"<h2>calico-vxlan / tcp</h2>",
		"<h3>Normalized bitrate</h3>",
		"<h3>Absolute bitrate (Gbit/s)</h3>",
		"<h3>Per-core idle %</h3>",
		"<h3>Per-core softirq %</h3>",
		"<h2>Published reference numbers — seed 000 (paper) and seed 002 (repository)</h2>", // whose they are
		"<h2>Run metadata</h2>",
		"<h2>Comparability with the paper</h2>",
		"<h2>Method</h2>",
		"<h2>All summary rows</h2>",
		"6.1.0-test",                           // kernel from env.json
		"share all 4 CPUs",                     // comparability from NodeCPUs
		"calico-vxlan / rps / tcp / 1 replica", // a cell without samples
		">rfs+</text>",                         // legend inside a figure
		">published</text>",                    // published markers are drawn
		"paper 1.24",                           // reference beside ours
		"at 1 replica, mean over trials (n = 3 trials each), whiskers are 95% Student t intervals of the mean", // a core figure's n and interval
		"<th>command</th><td>cnibench run rps-rfs --set &#39;replicas=[1,16]&#39;</td>",                        // how it started
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Self-contained: no prolog inside HTML, nothing fetched from elsewhere.
	for _, bad := range []string{"<?xml", "<script", "<link", "src=\"http", "href=\"http", "url(http", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}

	// summary.csv: header and the baseline bitrate at 16 replicas.
	recs, err := csv.NewReader(strings.NewReader(readFile(t, filepath.Join(dir, results.SummaryCSV)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "datapath,tuning,workload,replicas,metric,cpu,unit,n,mean,sd,ci95_low,ci95_high,normalized,normalized_ci95_low,normalized_ci95_high,p_vs_baseline,p_vs_first_datapath,impairment"
	// Columns are only added at the end (the paired analysis's among them).
	if got := strings.Join(recs[0][:18], ","); got != want {
		t.Fatalf("header %q", got)
	}
	var base, rfs []float64
	for _, s := range samples {
		if s.Cell.Replicas == 16 {
			if s.Cell.Tuning == "baseline" {
				base = append(base, s.Metrics[results.MetricBitrate])
			} else {
				rfs = append(rfs, s.Metrics[results.MetricBitrate])
			}
		}
	}
	d, ratio := stats.Describe(base), stats.Ratio(rfs, base)
	found := 0
	for _, r := range recs[1:] {
		if r[3] != "16" || r[4] != "bitrate" {
			continue
		}
		switch r[1] {
		case "baseline":
			found++
			if r[6] != "bit/s" || r[7] != "3" || !closeTo(r[8], d.Mean) || !closeTo(r[10], d.CI95Low) || r[12] != "1" {
				t.Errorf("baseline record %q, want mean %v", r, d.Mean)
			}
		case "rfs+":
			found++
			if !closeTo(r[12], ratio.Ratio) || !closeTo(r[13], ratio.Low) || !closeTo(r[14], ratio.High) {
				t.Errorf("rfs+ record %q, want %+v", r, ratio)
			}
		case "rps":
			found++
			if r[7] != "0" || r[8] != "" || r[12] != "" {
				t.Errorf("missing cell record %q", r)
			}
		}
	}
	if found != 3 {
		t.Errorf("found %d of the 3 checked records", found)
	}

	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	if !strings.Contains(md, "### Normalized bitrate (vs baseline)") || !strings.Contains(md, "paper 1.24") {
		t.Errorf("summary.md incomplete:\n%s", md)
	}
	// summary.md is read alone: it names the paper its published numbers
	// are from and says what of the run compares with them, as
	// report.html does.
	for _, want := range []string{
		"\nSource: seed 000 (paper) and seed 002 (repository).\n",
		"\n## Published reference numbers — seed 000 (paper) and seed 002 (repository)\n",
		"\n## Comparability with the paper\n\nThe published numbers were measured on real hosts",
		"share all 4 CPUs",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

func closeTo(field string, want float64) bool {
	v, err := strconv.ParseFloat(field, 64)
	return err == nil && (v == want || (v-want)/want < 1e-12 && (want-v)/want < 1e-12)
}

func TestBuildDegraded(t *testing.T) {
	// A run that crashed early: study.yaml only, then a truncated sample.
	dir := filepath.Join(t.TempDir(), "run")
	writeSyntheticRun(t, dir)
	os.Remove(filepath.Join(dir, results.EnvFile))
	if err := os.WriteFile(filepath.Join(dir, results.SamplesFile), []byte(`{"cell":{"datapath":"calico-vx`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	for _, want := range []string{"truncated last line", "env.json is missing", "No samples in this run", "<h2>Method</h2>"} {
		if !strings.Contains(page, want) {
			t.Errorf("degraded report lacks %q", want)
		}
	}
}

// A kube run's header names the detected CNI beside the study's datapath
// names the cells carry; a local run's has no such line.
func TestBuildKubeHeader(t *testing.T) {
	dir, _ := syntheticDir(t)
	var env results.Env
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, results.EnvFile))), &env); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	if page := readFile(t, filepath.Join(dir, results.ReportHTML)); strings.Contains(page, "engine kube") {
		t.Error("local run's report has the kube header line")
	}
	env.Engine = "kube"
	env.NodeCPUs = map[string][]int{"worker-1": {0, 1, 2, 3}, "worker-2": {0, 1}}
	env.CNI = &results.CNI{Name: "flannel", Mode: "vxlan", Evidence: []string{"device flannel.1"}}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.EnvFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	head, _, _ := strings.Cut(page, "<h2>")
	for _, want := range []string{
		"engine kube) whose CNI was detected as flannel (vxlan); cells are named by the study&#39;s datapath (calico-vxlan)",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("report header lacks %q:\n%s", want, head)
		}
	}
	for _, want := range []string{"<th>CNI</th><td>flannel (vxlan) (evidence: device flannel.1)</td>", "real Kubernetes cluster with the CNI detected as flannel (vxlan)"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "emulated on one machine") {
		t.Error("kube report says the nodes were emulated")
	}
	if strings.Contains(page, "stands for") {
		t.Error("report says the label stands for another CNI, though the run found none")
	}

	// A label standing for another CNI than the cluster's (the kube
	// engine's checkLabel) is said in both headers, with how many
	// published numbers were left out: rps-rfs's eight name no
	// datapath, and a run stored before the engine left those out still
	// holds them, so the report leaves them out (it set "paper 90"
	// beside the cluster's CNI while its header said they were out).
	env.CNI.LabelStandsFor = "calico (vxlan)"
	if b, err = json.Marshal(env); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.EnvFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page = readFile(t, filepath.Join(dir, results.ReportHTML))
	head, _, _ = strings.Cut(page, "<h2>")
	if want := "That name stands for calico (vxlan), not what was measured: the study&#39;s 33 published numbers of it are left out of this report (study.yaml keeps them)."; !strings.Contains(head, want) {
		t.Errorf("report header lacks %q:\n%s", want, head)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	mdHead, _, _ := strings.Cut(md, "## ")
	if want := "engine kube) whose CNI was detected as flannel (vxlan); cells are named by the study's datapath (calico-vxlan). That name stands for calico (vxlan)"; !strings.Contains(mdHead, want) {
		t.Errorf("summary.md's header lacks %q:\n%s", want, mdHead)
	}
	for name, text := range map[string]string{"report.html": page, "summary.md": md} {
		if regexp.MustCompile(`paper [0-9]`).MatchString(text) || !strings.Contains(text, "Left out of this report: the study") {
			t.Errorf("%s sets the published numbers beside the cluster's CNI or does not say it left them out: %q", name, regexp.MustCompile(`.{0,80}paper [0-9].{0,20}`).FindString(text))
		}
	}

	// A run whose study.yaml the engine already emptied of them says so
	// without a count it cannot know.
	s, err := decodeStudy([]byte(readFile(t, filepath.Join(dir, results.StudyFile))))
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Reference = nil
	if got := clusterLine(env, s); !strings.Contains(got, "no published number of the study is set beside these cells") {
		t.Errorf("cluster line of an emptied study: %q", got)
	}
}

func TestBuildMissingStudy(t *testing.T) {
	if err := Build(t.TempDir()); err == nil {
		t.Fatal("Build without study.yaml succeeded")
	}
}

func TestInlineSVG(t *testing.T) {
	in := []byte("<?xml version=\"1.0\"?>\n<!-- Generated by SVGo and Plotinum VG -->\n<svg width=\"10pt\" height=\"10pt\" viewBox=\"0 0 10 10\">\n<text style=\"font-family:Liberation Sans;\">a&lt;b</text></svg>\n")
	out := string(inlineSVG(in, "T & U"))
	if !regexp.MustCompile(`^<svg role="img" class="fig" width=`).MatchString(out) {
		t.Errorf("prolog not stripped or attributes not added: %q", out)
	}
	if !strings.Contains(out, "<title>T &amp; U</title>") || !strings.Contains(out, "Arial") {
		t.Errorf("title or font fallback missing: %q", out)
	}
}

func TestDatapathText(t *testing.T) {
	got := datapathText(results.DatapathEnv{
		Type: "calico-routed", PodMTU: 1440, LinkRate: 1e9,
		Offloads: []string{"gro off on server/eth1"},
		Policy:   &results.PolicyEnv{Style: "calico", Mode: "wp", Chains: map[string]int{"server": 10}, Rules: map[string]int{"server": 38}},
	})
	want := "calico-routed, pod MTU 1440, line rate 1000 Mbit/s, offloads: gro off on server/eth1, calico policy wp (server 10 chains, 38 rules)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for v, want := range map[string]string{"1": "bridge, bridge-nf-call-iptables=1", "absent": "bridge, br_netfilter not loaded", "": "bridge"} {
		if got := datapathText(results.DatapathEnv{Type: "bridge", BridgeNFCallIPTables: v}); got != want {
			t.Errorf("bridge-nf-call-iptables %q: got %q, want %q", v, got, want)
		}
	}
}
