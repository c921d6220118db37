package app

import (
	"errors"
	"os"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// The lists of host-level changes in docs/safety.md and
// docs/architecture.md name everything tune.Plan writes outside a run's
// namespaces: a cpuIdle tuning once wrote every CPU's PM QoS limit on the
// host while both lists said only rps_sock_flow_entries and sysctls.
//
// hostKnobs has one row per knob field of study.Tuning: the tuning that
// sets it, and the word both lists must hold if Plan writes it on the
// host ("" if it never does).
var hostKnobs = map[string]struct {
	tuning study.Tuning
	doc    string
}{
	"rps":     {study.Tuning{RPS: &study.RPS{CPUs: study.CPUsAll}}, ""},
	"rfs":     {study.Tuning{RFS: &study.RFS{SockFlowEntries: 32768, FlowCnt: 32768}}, "rps_sock_flow_entries"},
	"sysctls": {study.Tuning{Sysctls: map[string]string{"net.core.busy_read": "50"}}, "sysctls"},
	"cpuIdle": {study.Tuning{CPUIdle: &study.CPUIdle{}}, "pm_qos_resume_latency_us"},
}

// tuningModifiers are the fields of study.Tuning that say where its knobs
// go, not what they are.
var tuningModifiers = []string{"name", "pods", "devices", "side"}

func TestDocsListHostChanges(t *testing.T) {
	lists := map[string]string{
		"docs/safety.md":       docParagraph(t, "../../docs/safety.md", "The host-wide values a run may change"),
		"docs/architecture.md": docParagraph(t, "../../docs/architecture.md", "- **Nothing in the host namespace.**"),
	}
	ty := reflect.TypeFor[study.Tuning]()
	for i := range ty.NumField() {
		key, _, _ := strings.Cut(ty.Field(i).Tag.Get("yaml"), ",")
		if _, ok := hostKnobs[key]; !ok && !slices.Contains(tuningModifiers, key) {
			t.Errorf("study.Tuning has a new field %s: add a row to hostKnobs (and, if tune.Plan writes it on the host, to both docs' lists)", key)
		}
	}
	// A server node in a namespace of its own, as on the local engine:
	// what Plan still writes on the host (netns "") is the host's.
	tgt := tune.Target{CPUs: cpuset.Set{0}, SoftIRQCore: -1, NodeNetns: "cnb-x-node-server"}
	for key, row := range hostKnobs {
		tu := row.tuning
		tu.Name = "t-" + key
		changes, err := tune.Plan(tu, tgt, fakeHostFS{})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var host []string
		for _, c := range changes {
			if c.Netns == "" {
				host = append(host, c.Path)
			}
		}
		switch {
		case len(host) > 0 && row.doc == "":
			t.Errorf("%s: tune.Plan writes %v on the host: give hostKnobs a word for it and list it in the docs", key, host)
		case len(host) == 0 && row.doc != "":
			t.Errorf("%s: tune.Plan writes nothing on the host, but hostKnobs expects %q", key, row.doc)
		}
		for f, text := range lists {
			if row.doc != "" && !strings.Contains(text, row.doc) {
				t.Errorf("%s's list of host-level changes lacks %s (%s tunings write %v on the host)", f, row.doc, key, host)
			}
		}
	}
}

// docParagraph is the paragraph (or list item) of a page that starts
// with start, up to the next blank line or list item.
func docParagraph(t *testing.T, file, start string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), start)
	if !ok {
		t.Fatalf("%s: no paragraph starting %q", file, start)
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "- ") {
			break
		}
		out = append(out, line)
	}
	return strings.Join(out, " ")
}

// fakeHostFS is a machine whose CPU 0 has a polling state and a 100 µs
// one, and whose node namespace shows no global sysctl.
type fakeHostFS struct{}

func (fakeHostFS) Read(netns, fs, p string) (string, error) {
	switch {
	case fs == tune.FSProc && netns != "":
		return "", tune.ErrNoSysctl
	case path.Base(p) == "latency" && strings.HasSuffix(path.Dir(p), "state1"):
		return "100", nil
	case path.Base(p) == "latency":
		return "0", nil
	case path.Base(p) == "disable":
		return "0", nil
	}
	return "", os.ErrNotExist
}

func (fakeHostFS) Write(string, string, string, string) error {
	return errors.New("a plan does not write")
}

func (fakeHostFS) List(_, _, dir string) ([]string, error) {
	if strings.HasSuffix(dir, "/cpuidle") {
		return []string{"state0", "state1"}, nil
	}
	return nil, os.ErrNotExist
}
