package cmdline

import (
	"slices"
	"testing"
)

func TestQuote(t *testing.T) {
	got := Quote([]string{"cnibench", "run", "./my study.yaml", "--set", "replicas=[1,4]", "--set", "metadata.name=it's", "--set", ""})
	want := `cnibench run './my study.yaml' --set 'replicas=[1,4]' --set 'metadata.name=it'\''s' --set ''`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestWithout(t *testing.T) {
	in := []string{"cnibench", "run", "cni-compare", "--quick", "--profile", "paper", "--set", "trials=2", "--profile=x", "--budget", "1h"}
	got := Without(in, []string{"quick"}, []string{"profile", "budget"})
	if want := []string{"cnibench", "run", "cni-compare", "--set", "trials=2"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A value that looks like a flag is still the valued flag's.
	got = Without([]string{"run", "--set", "--quick"}, []string{"quick"}, []string{"set"})
	if want := []string{"run"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A rerun's --set replaces the run's own of the same key, in either
// form, and keeps the others.
func TestWithSet(t *testing.T) {
	in := []string{"cnibench", "run", "x.yaml", "--set", "trials=3", "--set", "trials.max=5", "--set=trials=4", "--set", "tunings=[a]"}
	got := WithSet(in, "trials", "9")
	want := []string{"cnibench", "run", "x.yaml", "--set", "trials.max=5", "--set", "tunings=[a]", "--set", "trials=9"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := WithSet([]string{"run", "rps-rfs"}, "trials", "{min: 3, max: 6}"); Quote(got) != "run rps-rfs --set 'trials={min: 3, max: 6}'" {
		t.Errorf("got %q", Quote(got))
	}
}

// A narrowing --set replaces the run's own list of names, but not one
// that defines an entry inline: the narrowed names pick from it.
func TestNarrowSet(t *testing.T) {
	in := []string{"cnibench", "run", "s.yaml", "--set", "tunings=[baseline, rps, rfs]", "--set", "trials=3"}
	if got := NarrowSet(in, "tunings", "[baseline, rps]"); Quote(got) != "cnibench run s.yaml --set trials=3 --set 'tunings=[baseline, rps]'" {
		t.Errorf("names: %s", Quote(got))
	}
	inline := []string{"cnibench", "run", "s.yaml", "--set=tunings=[baseline, {name: busy, sysctls: {net.core.busy_read: 50}}, rps]"}
	got := NarrowSet(inline, "tunings", "[baseline, busy]")
	if want := append(slices.Clone(inline), "--set", "tunings=[baseline, busy]"); !slices.Equal(got, want) {
		t.Errorf("inline entry: got %q, want %q", got, want)
	}
}

// A rerun's selectors replace the run's own; its lists narrow as
// NarrowSet does.
func TestNarrow(t *testing.T) {
	in := []string{"cnibench", "run", "s.yaml", "--set", "only=[{tuning: rps}, {replicas: 4}]", "--set=tunings=[baseline, rps, rfs]"}
	got := Narrow(in, [][2]string{{"tunings", "[baseline, rps]"}, {"only", "[{tuning: rps, replicas: 1}]"}})
	if want := "cnibench run s.yaml --set 'tunings=[baseline, rps]' --set 'only=[{tuning: rps, replicas: 1}]'"; Quote(got) != want {
		t.Errorf("got  %s\nwant %s", Quote(got), want)
	}
}
