package study

import (
	"fmt"
	"strings"
)

// An error at the file's own text that the profile a run uses made one
// (the file's `only: [{replicas: 2}]` under `quick: {replicas: [1]}`)
// names the profile and its key that did, as setblame.go names a --set:
// the file's line alone points at a value that is fine by itself.

// profileBlame holds, as problemKey, the problems of the study without
// the run's profile and without each of the profile's keys in turn (nil
// where that study does not decode: nothing is known of it then).
type profileBlame struct {
	without    map[string]bool
	withoutKey map[string]map[string]bool
}

// blameProfile reads profileBlame for the run's opt, its --set kept.
func blameProfile(file string, data []byte, opt Options, cat Catalog) profileBlame {
	b := profileBlame{
		without:    problemsOf(file, data, Options{Set: opt.Set}, "", cat),
		withoutKey: map[string]map[string]bool{},
	}
	if b.without == nil {
		return b
	}
	root, err := decodeStrict(file, data)
	if err != nil {
		return b
	}
	prof := child(child(root, "profiles"), opt.Profile)
	for i := 0; prof != nil && i+1 < len(prof.Content); i += 2 {
		k := prof.Content[i].Value
		b.withoutKey[k] = problemsOf(file, data, opt, k, cat)
	}
	return b
}

// problemsOf are the problems of the file decoded with opt, the key drop
// of opt's profile left out (none when ""), as problemKey; nil where it
// does not decode.
func problemsOf(file string, data []byte, opt Options, drop string, cat Catalog) map[string]bool {
	root, err := decodeStrict(file, data)
	if err != nil {
		return nil
	}
	if prof := child(child(root, "profiles"), opt.Profile); drop != "" && prof != nil {
		for i := 0; i+1 < len(prof.Content); i += 2 {
			if prof.Content[i].Value == drop {
				prof.Content = append(prof.Content[:i:i], prof.Content[i+2:]...)
				break
			}
		}
	}
	d, err := decodeTree(file, root, opt, cat)
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	for _, fe := range problems(d.root, d.study, cat) {
		if fe.Line == 0 {
			fe.Line, _ = locate(d.root, fe.Field)
		}
		set[problemKey(fe)] = true
	}
	return set
}

// problemKey tells one problem from another across decodes of a file:
// its field and line, not its text. A message may carry hints from the
// values a profile or --set changed ("it has: baseline", "did you mean
// ..."), so the file's own slip (`only: [{tuning: rfs}]`) reads
// differently with them and without; the same field at the same line
// is the same problem.
func problemKey(fe *FieldError) string { return fmt.Sprintf("%s\x00%d", fe.Field, fe.Line) }

// origin names the profile of prof, with its keys without which fe goes
// away, when the study without the profile has no fe: `with profile
// "quick" (replicas, line 18)`. It is "" for the file's own problem,
// and where the study without the profile does not decode.
func (b profileBlame) origin(fe *FieldError, prof origins) string {
	k := problemKey(fe)
	if b.without == nil || b.without[k] {
		return ""
	}
	var keys []string
	for _, key := range prof.keys {
		// Without a key the study may not decode (a --set into an
		// entry the profile gives): that key is not known to be one.
		if m := b.withoutKey[key.Value]; m != nil && !m[k] {
			keys = append(keys, fmt.Sprintf("%s, line %d", key.Value, key.Line))
		}
	}
	o := fmt.Sprintf("with profile %q", prof.name)
	if len(keys) > 0 {
		// Several keys the problem needs all of; none named where any
		// one of several would make it.
		o += " (" + strings.Join(keys, "; ") + ")"
	}
	return o
}
