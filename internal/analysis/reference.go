package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// RefMatches reports whether a published reference describes a row. Empty
// reference fields (datapath, tuning, replicas 0, no cpu) match anything:
// "every core > 90% idle" has no cpu and so applies to each core's row.
// References carry no workload; they match every workload.
func RefMatches(ref study.Reference, row results.SummaryRow) bool {
	return ref.Metric == row.Metric &&
		(ref.Datapath == "" || ref.Datapath == row.Datapath) &&
		(ref.Tuning == "" || ref.Tuning == row.Tuning) &&
		(ref.Replicas == 0 || ref.Replicas == row.Replicas) &&
		(ref.CPU == nil || *ref.CPU == row.CPU)
}

// RefsFor returns the references that match a row.
func RefsFor(refs []study.Reference, row results.SummaryRow) []study.Reference {
	var out []study.Reference
	for _, r := range refs {
		if RefMatches(r, row) {
			out = append(out, r)
		}
	}
	return out
}

// RowsFor returns the rows with data (N > 0) that a reference matches.
func RowsFor(ref study.Reference, rows []results.SummaryRow) []results.SummaryRow {
	var out []results.SummaryRow
	for _, r := range rows {
		if r.N > 0 && RefMatches(ref, r) {
			out = append(out, r)
		}
	}
	return out
}
