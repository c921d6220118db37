package app

import (
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// The anchor examples of docs/study-format.md, as written (aliases,
// merge keys and an x- key reach the parser: a fragment decoded into Go
// values first would have yaml.v3 resolve them before it), spliced into
// a minimal study, resolve as the page says.
func TestDocsAnchorExamples(t *testing.T) {
	page, err := os.ReadFile("../../docs/study-format.md")
	if err != nil {
		t.Fatal(err)
	}
	const head = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: doc}\n"
	rest := map[string]string{
		"datapaths": "  datapaths: [flannel-vxlan]\n", "tunings": "  tunings: [baseline]\n",
		"workloads": "  workloads: [{tool: iperf3}]\n", "trials": "  trials: 1\n  duration: 10s\n",
	}
	var merged, extension *study.Study
	for _, block := range yamlBlocks(string(page)) {
		var src string
		switch {
		case strings.Contains(block, "<<:") && strings.HasPrefix(block, "  tunings:"):
			src = head + "spec:\n" + block + others(rest, "tunings")
		case strings.HasPrefix(block, "x-"):
			src = head + block + others(rest, "")
		default:
			continue
		}
		s, err := study.Parse("doc.yaml", []byte(src), study.Options{}, studyCatalog())
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		if strings.HasPrefix(block, "x-") {
			extension = s
		} else {
			merged = s
		}
	}
	if merged == nil || extension == nil {
		t.Fatalf("the page's merge-key example found: %v, its x- example: %v", merged != nil, extension != nil)
	}
	pods := merged.Spec.Tunings[1]
	if pods.Name != "rps-pods" || !pods.Pods || pods.RPS == nil || pods.RPS.CPUs != "all" || pods.Side != study.SideBoth {
		t.Errorf("rps-pods as merged: %+v", pods)
	}
	if n := extension.Spec.Nodes; n.Server.CPUs != "2-3" || n.Client.CPUs != "2-3" {
		t.Errorf("nodes from the x- block: %+v", n)
	}
}

// others are the minimal spec's lines but the one a block gives.
func others(rest map[string]string, but string) string {
	var b strings.Builder
	for _, k := range []string{"datapaths", "tunings", "workloads", "trials"} {
		if k != but {
			b.WriteString(rest[k])
		}
	}
	return b.String()
}
