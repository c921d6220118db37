package study

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// whose locates a problem Validate found in the tree after profile and
// --set, and says which of them it comes from: the line of the file or
// profile, and `with --set KEY` where a --set is part of it though the
// value named is the file's. `trials: {min: 3, max: 20}` with `--set
// trials.min=30` is refused at the file's max, which alone is fine.
type whose struct {
	file    string
	root    *yaml.Node
	prof    origins
	touched map[*yaml.Node]string // the mappings and lists --set changed an entry of, by key
	// own are the file's problems without this run's --set (field and
	// line: problemKey), read at most once; nil without --set.
	own func() map[string]bool
	// byProfile tells which of the run's profile's keys made a problem
	// of the file's text one (profileblame.go), read at most once; nil
	// without a profile.
	byProfile func() profileBlame
}

func (w *whose) locate(fe *FieldError) {
	fe.File = w.file
	if fe.Line != 0 {
		return
	}
	var n *yaml.Node
	fe.Line, n = locate(w.root, fe.Field)
	fe.Origin = w.prof.of(n)
	if fe.Line == 0 {
		return // the value is --set's: "(--set)"
	}
	if fe.Origin == "" && w.byProfile != nil {
		fe.Origin = w.byProfile().origin(fe, w.prof)
	}
	k, ok := w.touched[n]
	if !ok && w.own != nil && !w.own()[problemKey(fe)] {
		// Not the file's own problem: a --set into a mapping or list
		// that holds the value made it one (a sibling it is checked
		// against).
		k, ok = w.setAbove(fe.Field)
	}
	if ok {
		// The file's line alone would blame the file.
		fe.Origin = strings.TrimPrefix(fe.Origin+", with --set "+k, ", ")
	}
}

// setAbove is the --set key of the nearest mapping or list above field
// that a --set changed an entry of.
func (w *whose) setAbove(field string) (string, bool) {
	for p := parentPath(field); p != ""; p = parentPath(p) {
		if _, n := locate(w.root, p); n != nil {
			if k, ok := w.touched[n]; ok {
				return k, true
			}
		}
	}
	return "", false
}

// parentPath is the path of what holds field: spec.trials of
// spec.trials.max, spec.tunings of spec.tunings[1]; "" at the top.
func parentPath(field string) string {
	if i := strings.LastIndexAny(field, ".["); i > 0 {
		return field[:i]
	}
	return ""
}

// ownProblems are the problems Validate finds in the file with profile
// applied and no --set, as problemKey; none where it does not decode
// (then every problem is taken as --set's doing).
func ownProblems(file string, data []byte, profile string, cat Catalog) map[string]bool {
	if own := problemsOf(file, data, Options{Profile: profile}, "", cat); own != nil {
		return own
	}
	return map[string]bool{}
}
