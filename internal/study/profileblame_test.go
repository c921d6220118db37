package study

import (
	"strings"
	"testing"
)

// A profile's value that makes the file's own text wrong, the text being
// fine by itself, is named beside the file's line with the profile's key
// and line: `only: [{replicas: 2}]` under `quick: {replicas: [1]}` was
// blamed on the file's only alone.
func TestProfileNamedWhereItMakesTheFileWrong(t *testing.T) {
	only := strings.Replace(boundsBase, "replicas: [1, 2]", "replicas: [1, 2]\n  only: [{replicas: 2}]", 1)
	adaptive := strings.Replace(boundsBase, "trials: 2", "trials: {min: 3, max: 20}", 1)
	for _, c := range []struct {
		name, data, profile string
		set                 []string
		want                string
	}{
		// Of the profile's keys, the one the problem needs.
		{"elsewhere in the spec", only, "quick: {trials: 1, replicas: [1], duration: 2s}", nil,
			`bounds.yaml:17: with profile "quick" (replicas, line 24): spec.only[0].replicas: the study has no replica count "2"`},
		{"with an unrelated --set", only, "quick: {replicas: [1]}", []string{"duration=5s"},
			`bounds.yaml:17: with profile "quick" (replicas, line 24): spec.only[0].replicas:`},
		// A --set that makes it without the profile is named alone.
		{"the --set's", only, "quick: {replicas: [1, 2]}", []string{"replicas=[1]"},
			`bounds.yaml:17: with --set replicas: spec.only[0].replicas:`},
		// The file's own problem is the file's, profile or not.
		{"the file's own", strings.Replace(boundsBase, "trials: 2", "trials: {min: 5, max: 3}", 1), "quick: {duration: 2s}", nil,
			"bounds.yaml:17: spec.trials.max: max 3 is below min 5"},
		// A value the profile gives is the profile's, as before.
		{"the profile's value", adaptive, "quick: {trials: {min: 5, max: 3}}", nil,
			`bounds.yaml:23: profile "quick": spec.trials.max: max 3 is below min 5`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := c.data + "profiles:\n  " + c.profile + "\n"
			_, err := Parse("bounds.yaml", []byte(data), Options{Profile: "quick", Set: c.set}, testCatalog)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v\nwant prefix %s", err, c.want)
			}
		})
	}
}

// The file's own slip is the file's though its message reads otherwise
// with the profile or --set: hints name the values they changed ("it
// has: baseline", "did you mean"), and the same field at the same line
// is the same problem. `only: [{tuning: rfs-smal}]` was blamed on a
// profile's or --set's tunings.
func TestFilesOwnSlipNotBlamedForItsHint(t *testing.T) {
	tuning := strings.Replace(boundsBase, "replicas: [1, 2]", "replicas: [1, 2]\n  only: [{tuning: rfs-smal}]", 1)
	replicas := strings.Replace(boundsBase, "replicas: [1, 2]", "replicas: [1, 2]\n  only: [{replicas: 3}]", 1)
	for _, c := range []struct {
		name, data, profile string
		set                 []string
		want                string
	}{
		{"tuning, profile", tuning, "quick: {tunings: [baseline]}", nil,
			`bounds.yaml:17: spec.only[0].tuning: the study has no tuning "rfs-smal" (it has: baseline)`},
		{"tuning, --set", tuning, "", []string{"tunings=[baseline, rfs-small, rps]"},
			`bounds.yaml:17: spec.only[0].tuning: the study has no tuning "rfs-smal"`},
		{"replicas, profile", replicas, "quick: {replicas: [1]}", nil,
			`bounds.yaml:17: spec.only[0].replicas: the study has no replica count "3"`},
		{"replicas, --set", replicas, "", []string{"replicas=[1, 2, 4]"},
			`bounds.yaml:17: spec.only[0].replicas: the study has no replica count "3"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{Set: c.set}
			data := c.data
			if c.profile != "" {
				data += "profiles:\n  " + c.profile + "\n"
				opt.Profile = "quick"
			}
			_, err := Parse("bounds.yaml", []byte(data), opt, testCatalog)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v\nwant prefix %s", err, c.want)
			}
		})
	}
}

// A profile key that is a --set path (`trials.min: 3`) is refused at the
// profile's key, naming the profile: it was one unknown field at the
// file's trials line, no profile named, whichever profile the run used.
func TestDottedProfileKeyRefusedAtTheProfile(t *testing.T) {
	data := boundsBase + "profiles:\n  quick: {duration: 2s}\n  paper:\n    trials.min: 3\n"
	want := `bounds.yaml:25: profiles.paper: key "trials.min": profile keys are top-level fields of spec, each replacing the whole field: give trials whole here, or use --set trials.min=3 for one subfield`
	for _, profile := range []string{"", "quick", "paper"} {
		_, err := Parse("bounds.yaml", []byte(data), Options{Profile: profile}, testCatalog)
		if err == nil || err.Error() != want {
			t.Errorf("profile %q: got %v\nwant %s", profile, err, want)
		}
	}
}
