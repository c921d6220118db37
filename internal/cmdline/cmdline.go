// Package cmdline holds command lines as words: printed back as a shell
// would take them (a report's rerun command, advise's "To decide"), and
// edited by flag (a rerun with a profile or a trial maximum of its own).
// Nothing here runs a command: cnibench never builds a shell line to
// execute.
package cmdline

import (
	"slices"
	"strings"
)

// Quote prints words as a shell would take them back: a word with
// characters the shell reads (a study path with a space, --set
// 'replicas=[1,4]') in single quotes. For display only.
func Quote(words []string) string {
	out := make([]string, len(words))
	for i, a := range words {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`!#&|;<>()[]{}*?~") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// Without returns words without the flags named: switches (--quick)
// alone, valued flags (--profile paper) with the word after them, in
// either form (--profile=paper too). The words are a command that ran,
// so no value of a flag kept looks like a flag named here.
func Without(words []string, switches, valued []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, _, inline := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !strings.HasPrefix(w, "--") {
			out = append(out, w)
			continue
		}
		switch {
		case slices.Contains(switches, name):
		case slices.Contains(valued, name):
			if !inline {
				i++ // its value
			}
		default:
			out = append(out, w)
		}
	}
	return out
}

// WithSet returns words with `--set KEY=VALUE` last, and without the
// earlier --set of that same key (either form), which the new one would
// override anyway: a rerun command reads "--set trials=9", not "--set
// trials=3 --set trials=9". Other keys, "trials.max" beside "trials"
// too, are kept.
func WithSet(words []string, key, value string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--set" && i+1 < len(words) && setsKey(words[i+1], key):
			i++
		case strings.HasPrefix(w, "--set=") && setsKey(strings.TrimPrefix(w, "--set="), key):
		default:
			out = append(out, w)
		}
	}
	return append(out, "--set", key+"="+value)
}

// NarrowSet returns words with `--set KEY=[names]` last, a list that
// picks entries by name from the list before it. An earlier --set of
// that key is replaced, as WithSet does, unless it defines an entry
// inline ("tunings=[baseline, {name: busy, ...}]"): without it "busy"
// would name nothing, so it stays and the narrowing picks from it.
func NarrowSet(words []string, key, names string) []string {
	for i, w := range words {
		kv := strings.TrimPrefix(w, "--set=")
		if w == "--set" && i+1 < len(words) {
			kv = words[i+1]
		} else if kv == w {
			continue
		}
		if setsKey(kv, key) && strings.Contains(kv, "{") {
			return append(slices.Clone(words), "--set", key+"="+names)
		}
	}
	return WithSet(words, key, names)
}

// Narrow applies a rerun scope's overrides (analysis.Scope.Sets) to
// words: each list by NarrowSet; spec.only's selectors by WithSet, since
// they define no entry the new ones could pick from, and the new ones
// are chosen not to pick what the run's own left out (a run of
// `--set only=[...]` rerun gets one --set only, not two).
func Narrow(words []string, sets [][2]string) []string {
	for _, kv := range sets {
		if kv[0] == "only" {
			words = WithSet(words, kv[0], kv[1])
			continue
		}
		words = NarrowSet(words, kv[0], kv[1])
	}
	return words
}

func setsKey(kv, key string) bool {
	k, _, ok := strings.Cut(kv, "=")
	return ok && strings.TrimSpace(k) == key
}
