package study

import (
	"strings"
	"testing"
)

// Every profile of a file is checked as it loads, whichever profile
// the run uses: a slip in one was refused only by the run that used it.
func TestEveryProfileChecked(t *testing.T) {
	const profiles = "profiles:\n  fine: {trials: 3}\n  quick: {trails: 2}\n"
	for _, c := range []struct {
		name, text string
		opt        Options
		want       string
	}{
		{"no profile", profiles, Options{}, `bounds.yaml:24: profile "quick": spec.trails: unknown field "trails"`},
		{"another profile", profiles, Options{Profile: "fine"}, `bounds.yaml:24: profile "quick": spec.trails: unknown field "trails"`},
		{"with --set", profiles, Options{Set: []string{"trials=4"}}, `bounds.yaml:24: profile "quick": spec.trails: unknown field "trails"`},
		{"the profile used", profiles, Options{Profile: "quick"}, `bounds.yaml:24: profile "quick": spec.trails: unknown field "trails"`},
		// The profile makes the file's own text wrong: found by the
		// run that uses it, at the file's line, the profile named
		// (profileblame.go).
		{"file's text", "profiles:\n  quick: {replicas: [1]}\n", Options{Profile: "quick"},
			`bounds.yaml:17: with profile "quick" (replicas, line 24): spec.only[0].replicas: the study has no replica count "2"`},
		{"a custom decoder's", "profiles:\n  quick: {noise: {maxSteal: 1}}\n", Options{},
			`bounds.yaml:23: profile "quick": spec.noise.maxSteal: unknown noise field "maxSteal"`},
		{"not a mapping", "profiles:\n  quick: 3\n", Options{}, `bounds.yaml:23: profiles.quick: a profile is a mapping of spec fields`},
		// A value past its bound (checkValueBounds, checkReferences) is
		// refused too, whichever profile the run uses: `paper: {trials:
		// 5000}` passed show and failed only with --profile paper.
		{"a bound", "profiles:\n  fine: {trials: 3}\n  paper: {trials: 5000}\n", Options{},
			`bounds.yaml:24: profile "paper": spec.trials: must be between 1 and 1000, got 5000`},
		{"a bound, another profile used", "profiles:\n  fine: {trials: 3}\n  paper: {trials: 5000}\n", Options{Profile: "fine"},
			`bounds.yaml:24: profile "paper": spec.trials: must be between 1 and 1000, got 5000`},
		{"a name's pattern", "profiles:\n  quick: {tunings: [baseline, {name: ../x, rps: {cpus: all}}]}\n", Options{},
			`bounds.yaml:23: profile "quick": spec.tunings[1].name: "../x": use ASCII letters`},
		{"a reference's bound", "profiles:\n  quick: {reference: [{replicas: 999, metric: bitrate, value: 1}]}\n", Options{},
			`bounds.yaml:23: profile "quick": spec.reference[0].replicas: must be between 1 and 250`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := boundsBase + c.text
			if c.name == "file's text" {
				data = strings.Replace(boundsBase, "replicas: [1, 2]", "replicas: [1, 2]\n  only: [{replicas: 2}]", 1) + c.text
			}
			_, err := Parse("bounds.yaml", []byte(data), c.opt, testCatalog)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v\nwant prefix %s", err, c.want)
			}
		})
	}
	// A profile that breaks a rule relating fields is left to the run
	// that uses it (with the --set that completes it): it does not stop
	// the file's other runs.
	udp := boundsBase + "profiles:\n  udp: {workloads: [{name: u, tool: iperf3, protocol: udp}]}\n"
	if _, err := Parse("bounds.yaml", []byte(udp), Options{}, testCatalog); err != nil {
		t.Errorf("a profile completed by --set stopped a run without it: %v", err)
	}
	if _, err := Parse("bounds.yaml", []byte(udp), Options{Profile: "udp"}, testCatalog); err == nil || !strings.Contains(err.Error(), "rate") {
		t.Errorf("the profile used without its rate: %v", err)
	}
	// Good profiles pass, and a --set this run gives is no profile's.
	good := boundsBase + "profiles:\n  quick: {trials: 1, replicas: [1]}\n"
	if _, err := Parse("bounds.yaml", []byte(good), Options{Set: []string{"replicas=[2]"}}, testCatalog); err != nil {
		t.Errorf("good profiles: %v", err)
	}
}

// A file without spec, run with a profile, is refused at the document's
// first line, not as a --set's problem ("my.yaml (--set): spec:
// missing"): no --set was given.
func TestProfileWithoutSpec(t *testing.T) {
	data := []byte("# a comment\napiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: x}\nprofiles:\n  quick: {trials: 2}\n")
	_, err := Parse("my.yaml", data, Options{Profile: "quick"}, testCatalog)
	want := `my.yaml:2: spec: missing: the study has no spec to merge profile "quick" over`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
