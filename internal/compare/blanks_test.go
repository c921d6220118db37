package compare

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// A kube run whose server node its agent could not describe has blank
// host, kernel, CPU model and count in env.json: unknown, no difference
// from the other run's ("host (none) / node-a", "CPU 0 × / 64 × EPYC"
// were); what both runs know still differs, and About says unknown.
func TestDifferencesBlankMachine(t *testing.T) {
	known := results.Env{Engine: "kube", Version: "v1", Hostname: "node-a", Kernel: "6.1.0", CPUs: 64, CPUModel: "AMD EPYC"}
	blank := results.Env{Engine: "kube", Version: "v1"}
	if d := Differences(known, blank, nil); len(d) != 0 {
		t.Errorf("one run's node not described: %q, want no difference", d)
	}
	if d := Differences(blank, known, nil); len(d) != 0 {
		t.Errorf("the other way round: %q, want no difference", d)
	}
	noModel := known
	noModel.CPUModel, noModel.CPUs = "", 32
	if d := strings.Join(Differences(known, noModel, nil), "; "); d != "CPU 64 CPUs / 32 CPUs" {
		t.Errorf("counts known on both sides, a model on one: %q, want the counts compared alone", d)
	}
	other := known
	other.CPUModel = "Intel Xeon"
	if d := strings.Join(Differences(known, other, nil), "; "); d != "CPU 64 × AMD EPYC / 64 × Intel Xeon" {
		t.Errorf("another model: %q", d)
	}
	if got := About(blank); got != "kube engine, host unknown, kernel unknown" {
		t.Errorf("About = %q", got)
	}
}
