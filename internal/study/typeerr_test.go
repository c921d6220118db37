package study

import (
	"strings"
	"testing"
)

// Errors that named Go types: a profiles that is no mapping ("cannot
// unmarshal !!int `5` into map[string]interface {}": the type's space
// defeated the rewording), a file that is a list ("into study.Study"),
// and a --set value written as a list that YAML cannot read, which was
// taken for a string ("want a list, not "[baseli...""). Each names
// what and where in the study's own words.
func TestTypeErrorsInStudyWords(t *testing.T) {
	head := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: x}\nspec: {datapaths: [bridge], workloads: [{tool: iperf3}]}\n"
	for _, c := range []struct {
		name, data string
		set        []string
		want       string
	}{
		{"profiles not a mapping", head + "profiles: 5\n", nil, "f.yaml:5: profiles: want a mapping (docs/study-format.md), not 5"},
		{"a list", "- a\n- b\n", nil, "f.yaml:1: a study file is a YAML mapping (apiVersion, kind, metadata, spec), not a list"},
		{"--set list cut", head, []string{"replicas=[1, 4"}, `replicas=[1, 4: "[1, 4" does not read as YAML: line 1: did not find expected ',' or ']'`},
		{"--set unknown alias", head, []string{"replicas=[1,*x]"}, `"[1,*x]" does not read as YAML: unknown anchor 'x' referenced`},
	} {
		_, err := Parse("f.yaml", []byte(c.data), Options{Set: c.set}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "interface") || strings.Contains(err.Error(), "study.Study") {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
}
