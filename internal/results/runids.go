package results

import "slices"

// AllRunIDs is the run ID of every part of the run that env.json knows
// of: RunIDs, with RunID added where it is not among them. An env.json
// written before run_ids was recorded knows only RunID, the part that
// last rewrote it; an earlier part's objects left on a cluster were
// looked for by the resume after it.
func (e Env) AllRunIDs() []string {
	ids := slices.Clone(e.RunIDs)
	if e.RunID != "" && !slices.Contains(ids, e.RunID) {
		ids = append(ids, e.RunID)
	}
	return ids
}
