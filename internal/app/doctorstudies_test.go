package app

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// doctor says for every built-in study and profile whether it runs here
// (the dry run's preflight), with its machine time, and why a study does
// not run, or runs without some datapaths; the table fits a terminal.
func TestStudiesHere(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the local engine's preflight needs root")
	}
	var b bytes.Buffer
	if err := writeStudiesHere(context.Background(), &b, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := map[string]string{}
	table, _, _ := strings.Cut(out, "\n\n")
	for _, l := range strings.Split(table, "\n") {
		if len(l) > doctorWidth {
			t.Errorf("%d columns: %q", len(l), l)
		}
		if f := strings.Fields(l); len(f) >= 3 {
			rows[f[0]+" "+f[1]] = f[2]
			// Every study row gives its machine time, also one that
			// does not run here.
			if !strings.HasPrefix(l, " ") && f[0] != "STUDY" && !timeRE.MatchString(l) {
				t.Errorf("no machine time: %q", l)
			}
		}
	}
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, studyCatalog())
		if err != nil {
			t.Fatal(err)
		}
		profiles := append([]string{"(default)"}, s.ProfileNames()...)
		for _, p := range profiles {
			runs, ok := rows[name+" "+p]
			switch {
			case !ok:
				t.Errorf("no row for %s %s:\n%s", name, p, out)
			case runs == "no" || runs == "without":
				if !reasonFor(out, name, p) {
					t.Errorf("%s %s does not run whole here, and no reason is given:\n%s", name, p, out)
				}
			case runs != "yes":
				t.Errorf("%s %s: %q", name, p, runs)
			}
		}
	}
	if !strings.Contains(out, "rps-rfs           quick       yes") && !reasonFor(out, "rps-rfs", "quick") {
		t.Errorf("rps-rfs --quick neither runs nor says why:\n%s", out)
	}
}

// reasonFor says whether doctor's output gives a reason for a study's
// profile: a line "  STUDY PROFILES: ..." whose profiles list it.
func reasonFor(out, name, profile string) bool {
	for _, l := range strings.Split(out, "\n") {
		if list, _, ok := strings.Cut(strings.TrimPrefix(l, "  "+name+" "), ": "); ok && strings.HasPrefix(l, "  "+name+" ") &&
			slices.Contains(strings.Split(list, ", "), profile) {
			return true
		}
	}
	return false
}

// The reasons under the table give each text once per study, with the
// profiles it holds for, in the order they were found.
func TestReasonsMerge(t *testing.T) {
	var r reasons
	r.add("cni-compare", "(default)", "none stands for it")
	r.add("cni-compare", "quick", "none stands for it")
	r.add("rps-rfs", "quick", "none stands for it")
	r.add("cni-compare", "paper", "netem missing")
	if len(r) != 3 || strings.Join(r[0].profiles, ", ") != "(default), quick" || r[1].study != "rps-rfs" || r[2].text != "netem missing" {
		t.Errorf("reasons %+v", r)
	}
	if !reasonFor("\n  cni-compare (default), quick: none\n", "cni-compare", "quick") || reasonFor("\n  cni-compare (default): none\n", "cni-compare", "quick") {
		t.Error("reasonFor")
	}
}

var timeRE = regexp.MustCompile(`[0-9](s|m| ?min| ?h)\b`)

// Without root every study's preflight would say the same: doctor says it
// once.
func TestStudiesHereWithoutRoot(t *testing.T) {
	var b bytes.Buffer
	if err := writeStudiesHere(context.Background(), &b, false); err != nil || strings.Count(b.String(), "\n") != 1 || !strings.Contains(b.String(), "as root") {
		t.Errorf("%v: %q", err, b.String())
	}
}

func TestPlannedText(t *testing.T) {
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick"}, studyCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if got := plannedText(s); got != "2m to 6m40s, budget 4m30s" {
		t.Errorf("rps-rfs quick: %q", got)
	}
	s.Spec.Trials, s.Spec.Budget = study.Fixed(10), study.Duration{}
	if got := plannedText(s); got != "6m40s" {
		t.Errorf("fixed, no budget: %q", got)
	}
}
