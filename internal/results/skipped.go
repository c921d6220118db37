package results

import (
	"regexp"
	"strings"
)

// Skipped is a datapath of the study a run did not build because the
// machine lacked what it needs (a kernel feature, a tool), dropped under
// spec.skipUnavailable. The run's study.yaml lists only the datapaths that
// ran; env.json keeps the skips as the engine's notes (SkipNote), the one
// place that says they were asked for.
type Skipped struct {
	Datapath string `json:"datapath"`
	Reason   string `json:"reason"`
}

// SkipNote is the note of datapaths skipped for one reason: "datapath a
// skipped: why" or "datapaths a, b skipped: why". The local engine writes
// it; the report (SkippedOf) and a resumed run (IsSkipNote) read it back.
func SkipNote(names []string, why string) string {
	head := "datapath "
	if len(names) > 1 {
		head = "datapaths "
	}
	return head + strings.Join(names, ", ") + " skipped: " + why
}

// skipNoteRE reads SkipNote's text; a reason may run over lines.
var skipNoteRE = regexp.MustCompile(`(?s)^datapaths? (\S+(?:, \S+)*) skipped: (.+)$`)

// IsSkipNote says whether note is a SkipNote.
func IsSkipNote(note string) bool { return skipNoteRE.MatchString(note) }

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
