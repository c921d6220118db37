package analysis

import (
	"regexp"
	"strings"
)

// Skipped is a datapath of the study the run did not build because this
// machine lacked what it needs (a kernel feature, a tool), dropped under
// spec.skipUnavailable. The run's study.yaml lists only the datapaths
// that ran, so without this the summary would not say they were asked
// for.
type Skipped struct {
	Datapath string `json:"datapath"`
	Reason   string `json:"reason"`
}

// skipNoteRE is the local engine's note of skipped datapaths
// (localengine's skips.notes): "datapath a skipped: why" or "datapaths
// a, b skipped: why". env.json records the skips only as these notes.
// A reason may run over lines ((?s)). localengine's TestSkipNotesReadBack
// reads its notes back with SkippedOf, so the two change together.
var skipNoteRE = regexp.MustCompile(`(?s)^datapaths? (\S+(?:, \S+)*) skipped: (.+)$`)

// SkippedOf reads the skipped datapaths from a run's notes, one entry per
// datapath in the notes' order; other notes are not skips.
func SkippedOf(notes []string) []Skipped {
	var out []Skipped
	for _, n := range notes {
		m := skipNoteRE.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		for _, d := range strings.Split(m[1], ", ") {
			out = append(out, Skipped{Datapath: d, Reason: m[2]})
		}
	}
	return out
}
