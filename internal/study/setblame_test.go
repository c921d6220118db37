package study

import (
	"strings"
	"testing"
)

// A --set that makes a value of the file wrong, the value itself being
// fine, is named beside the file's line: `--set trials.min=30` over
// `trials: {min: 3, max: 20}` blamed the file's max alone.
func TestSetNamedWhereItMakesTheFileWrong(t *testing.T) {
	adaptive := strings.Replace(boundsBase, "trials: 2", "trials: {min: 3, max: 20}", 1)
	for _, c := range []struct {
		name, data string
		set        []string
		want       string
	}{
		{"sibling in a mapping", adaptive, []string{"trials.min=30"},
			"bounds.yaml:17: with --set trials.min: spec.trials.max: max 20 is below min 30"},
		{"elsewhere in the spec", strings.Replace(boundsBase, "replicas: [1, 2]", "replicas: [1, 2]\n  only: [{replicas: 2}]", 1), []string{"replicas=[1]"},
			`bounds.yaml:17: with --set replicas: spec.only[0].replicas: the study has no replica count "2"`},
		// The file's own problem is the file's, --set or not.
		{"the file's own", strings.Replace(boundsBase, "trials: 2", "trials: {min: 5, max: 3}", 1), []string{"duration=5s"},
			"bounds.yaml:17: spec.trials.max: max 3 is below min 5"},
		{"the --set value", adaptive, []string{"trials={min: 3}"}, "bounds.yaml (--set): spec.trials.max: max 0 is below min 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bounds.yaml", []byte(c.data), Options{Set: c.set}, testCatalog)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v\nwant prefix %s", err, c.want)
			}
		})
	}
}
