// Package suggest finds the name a user most likely meant when a name in
// a study file, a flag or a --set is unknown ("flanel-vxlan", "replica",
// "warmUp"), so that the one-line error can say it instead of leaving
// the user to scan a list of a dozen names.
package suggest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Closest is the known name nearest to name, or "" when none is near
// enough to be a slip: a case-only difference, or an edit distance of
// at most a third of the name's length (at least 1, at most 3). Of two
// names at the same distance the one that extends or shortens the name
// wins ("iperf" is iperf3, not qperf); otherwise a tie suggests neither:
// a guess between two is no help. Beyond that distance, the one known name
// that name begins, if only one does and name has at least three letters,
// is an abbreviation ("maxSteal" of maxStealPct, "dir" of direction).
func Closest(name string, known []string) string {
	if c := closest(name, known); c != "" || slices.Contains(known, name) {
		return c
	}
	var ext []string
	for _, k := range known {
		if len([]rune(name)) >= 3 && len(k) > len(name) && strings.HasPrefix(strings.ToLower(k), strings.ToLower(name)) {
			ext = append(ext, k)
		}
	}
	if len(ext) == 1 {
		return ext[0]
	}
	return ""
}

// closest is Closest within the edit distance alone.
func closest(name string, known []string) string {
	if name == "" {
		return ""
	}
	limit := min(max(len([]rune(name))/3, 1), 3)
	lower := strings.ToLower(name)
	var best []string
	bestD := limit + 1
	for _, k := range known {
		if strings.EqualFold(k, name) && k != name {
			return k
		}
		switch d := distance(lower, strings.ToLower(k)); {
		case d == 0:
			return ""
		case d < bestD:
			best, bestD = []string{k}, d
		case d == bestD && d <= limit && !slices.Contains(best, k):
			best = append(best, k)
		}
	}
	if len(best) > 1 {
		best = slices.DeleteFunc(best, func(k string) bool {
			k = strings.ToLower(k)
			return !strings.HasPrefix(k, lower) && !strings.HasPrefix(lower, k)
		})
	}
	if len(best) != 1 {
		return ""
	}
	return best[0]
}

// Slip is the known name one edit from name (a letter added, dropped,
// changed, or two neighbouring letters swapped: "request_per_s" for
// requests_per_s), or "" when none or several are: a nearness that
// nearly proves a misspelling, where Closest's wider one only hints.
func Slip(name string, known []string) string {
	found := ""
	for _, k := range known {
		if k != name && distance(name, k) == 1 {
			if found != "" {
				return ""
			}
			found = k
		}
	}
	return found
}

// distance is the Levenshtein distance, except that two neighbouring
// letters swapped count as one edit (Damerau's transposition), the
// commonest slip of all: "lenght" is then nearer to "length" than to
// "lengths", and "rsf" to "rfs" than to "rps".
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == len(rb) {
		var diff []int
		for i := range ra {
			if ra[i] != rb[i] {
				diff = append(diff, i)
			}
		}
		if len(diff) == 2 && diff[1] == diff[0]+1 && ra[diff[0]] == rb[diff[1]] && ra[diff[1]] == rb[diff[0]] {
			return 1
		}
	}
	return levenshtein.ComputeDistance(a, b)
}

// Hint is `did you mean "X"? ` for the closest known name, or "".
// Messages put it before their list of known names.
func Hint(name string, known []string) string {
	if c := Closest(name, known); c != "" {
		return fmt.Sprintf("did you mean %q? ", c)
	}
	return ""
}

// Nearest is Closest's name, or, where Closest finds none because several
// are equally near (names that come in families, rtt_us, rtt_p50_us,
// rtt_p99_us, where a guess between them is no slip of one letter),
// every name equally near: by edit distance within Closest's limit, or,
// for a name of three letters or more that begins them, by how little
// they add ("rtt": rtt_us before rtt_p99_us). Nil when none is near, or
// when more than most are equally near: a list that long is no hint.
func Nearest(name string, known []string, most int) []string {
	if c := Closest(name, known); c != "" {
		return []string{c}
	}
	lower := strings.ToLower(name)
	n := len([]rune(name))
	limit := min(max(n/3, 1), 3)
	var best []string
	bestD := -1
	for _, k := range known {
		lk := strings.ToLower(k)
		d := distance(lower, lk)
		if d > limit && (n < 3 || !strings.HasPrefix(lk, lower)) {
			continue
		}
		switch {
		case bestD < 0 || d < bestD:
			best, bestD = []string{k}, d
		case d == bestD:
			best = append(best, k)
		}
	}
	if len(best) > most {
		return nil
	}
	return best
}
