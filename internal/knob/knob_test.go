package knob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every knob in List describes itself completely: what it changes, for
// how long, when the study wants it, what it needs, and how it applies.
func TestListEntriesComplete(t *testing.T) {
	for _, p := range problems(List) {
		t.Error(p)
	}
}

func problems(list []Entry) []string {
	var out []string
	seen := map[string]bool{}
	for i, e := range list {
		switch {
		case e.Name == "" || strings.ContainsAny(e.Name, " \t"):
			out = append(out, fmt.Sprintf("knob %d: bad name %q", i, e.Name))
		case seen[e.Name]:
			out = append(out, fmt.Sprintf("knob %s listed twice", e.Name))
		case len(e.Changes) < 20:
			out = append(out, fmt.Sprintf("knob %s: Changes %q says too little", e.Name, e.Changes))
		case !slices.Contains(Scopes, e.Scope):
			out = append(out, fmt.Sprintf("knob %s: unknown scope %q", e.Name, e.Scope))
		case e.Wanted == nil || e.Needs == nil:
			out = append(out, fmt.Sprintf("knob %s: no Wanted or Needs", e.Name))
		case (e.Apply == nil) != (e.Scope == Build):
			out = append(out, fmt.Sprintf("knob %s: scope %s with Apply %v (only build knobs, applied by the engine, have none)", e.Name, e.Scope, e.Apply != nil))
		}
		seen[e.Name] = true
	}
	return out
}

func TestListCheckCatchesIncomplete(t *testing.T) {
	w := func(*Target) bool { return true }
	n := func(*Target) []string { return nil }
	a := func(context.Context, *Target) (Undo, error) { return nil, nil }
	c := "changes something somewhere on a node"
	for _, bad := range [][]Entry{
		{{Name: "x", Scope: Trial, Wanted: w, Needs: n, Apply: a}},
		{{Name: "x", Changes: c, Scope: "sometimes", Wanted: w, Needs: n, Apply: a}},
		{{Name: "x", Changes: c, Scope: Trial, Needs: n, Apply: a}},
		{{Name: "x", Changes: c, Scope: Trial, Wanted: w, Apply: a}},
		{{Name: "x", Changes: c, Scope: Trial, Wanted: w, Needs: n}},
		{{Changes: c, Scope: Trial, Wanted: w, Needs: n, Apply: a}},
		{tuningEntry, tuningEntry},
	} {
		if len(problems(bad)) == 0 {
			t.Errorf("incomplete list %+v passed", bad)
		}
	}
}

// Apply applies the wanted knobs of one scope in list order; Revert
// undoes them in reverse, each once, past failures; a failing Apply
// reverts what was applied before it.
func TestApplyRevertOrder(t *testing.T) {
	var log []string
	knob := func(name string, s Scope, fail, failUndo bool) Entry {
		return Entry{Name: name, Scope: s,
			Wanted: func(t *Target) bool { return !strings.HasPrefix(name, "unwanted") },
			Apply: func(context.Context, *Target) (Undo, error) {
				if fail {
					return nil, errors.New(name + " failed")
				}
				log = append(log, "+"+name)
				return func() error {
					log = append(log, "-"+name)
					if failUndo {
						return errors.New(name + " undo failed")
					}
					return nil
				}, nil
			}}
	}
	saved := List
	defer func() { List = saved }()
	List = []Entry{knob("a", Trial, false, false), knob("unwanted", Trial, false, false), knob("d", Datapath, false, false),
		knob("b", Trial, false, true), knob("c", Trial, false, false)}
	a, err := Apply(context.Background(), Trial, &Target{})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Revert()
	if got := strings.Join(log, " "); got != "+a +b +c -c -b -a" || err == nil || !strings.Contains(err.Error(), "b undo failed") {
		t.Errorf("log %q, err %v", got, err)
	}
	if a.Revert() != nil || len(log) != 6 {
		t.Error("second Revert did something")
	}
	log = nil
	List = []Entry{knob("a", Trial, false, false), knob("b", Trial, true, false), knob("c", Trial, false, false)}
	if _, err := Apply(context.Background(), Trial, &Target{}); err == nil || strings.Join(log, " ") != "+a -a" {
		t.Errorf("failed apply: log %q, err %v", log, err)
	} else if re := (*RevertError)(nil); errors.As(err, &re) {
		t.Errorf("failed apply, clean revert: %v is a RevertError", err)
	}
	// A failed apply whose revert fails too must say so by type: the
	// runner stops the run on it instead of retrying on a dirty host.
	log = nil
	List = []Entry{knob("a", Trial, false, true), knob("b", Trial, true, false)}
	if _, err := Apply(context.Background(), Trial, &Target{}); !errors.As(err, new(*RevertError)) || !strings.Contains(err.Error(), "b failed") {
		t.Errorf("failed apply, failed revert: %v, want a RevertError naming both", err)
	}
}
