package study

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestBuiltinsDescribeThemselves: a built-in study is one YAML file in
// builtin/ (the directory is the list); it must say what it is, where its
// parameters come from, and carry a quick profile, or `cnibench studies`
// and the report would show an entry that explains nothing.
func TestBuiltinsDescribeThemselves(t *testing.T) {
	names := Builtins()
	if len(names) == 0 {
		t.Fatal("no built-in studies embedded")
	}
	for _, name := range names {
		src, ok := BuiltinSource(name)
		if !ok {
			t.Fatalf("%s: listed but not readable", name)
		}
		var s struct {
			Metadata Metadata       `yaml:"metadata"`
			Profiles map[string]any `yaml:"profiles"`
			Rest     map[string]any `yaml:",inline"`
		}
		if err := yaml.Unmarshal(src, &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Metadata.Name != name {
			t.Errorf("%s: metadata.name %q differs from its file name", name, s.Metadata.Name)
		}
		if s.Metadata.Description == "" || s.Metadata.Source == "" {
			t.Errorf("%s: needs metadata.description and metadata.source (the seed or paper it reproduces)", name)
		}
		if _, ok := s.Profiles["quick"]; !ok {
			t.Errorf("%s: needs a quick profile (a run of minutes)", name)
		}
	}
}
