package results

// Stop is the adaptive controller's last word on one cell (stops.json).
type Stop struct {
	Cell Cell `json:"cell"`
	// Metric is the metric the cell was judged on.
	Metric string `json:"metric"`
	// Status is running (the run ended early), target, max, budget,
	// futile or failed.
	Status string `json:"status"`
	// N trials ran, Valid of them with the metric.
	N     int `json:"n"`
	Valid int `json:"valid"`
	// HalfWidth is the relative half-width reached (of the mean or of the
	// ratio to the baseline, as Of says); null when there is no interval.
	HalfWidth *float64 `json:"half_width"`
	Of        string   `json:"of"`
	// Target is the precision target (0: none).
	Target float64 `json:"target"`
	Reason string  `json:"reason"`
	// Decision against Versus at the last look (better, worse, equal,
	// undecided), with its interval at the looks' confidence; empty for a
	// cell compared with nothing.
	Decision string `json:"decision,omitempty"`
	// Versus names what the cell was compared with: the baseline tuning,
	// or in a study of datapaths the first datapath. Runs before it was
	// recorded compared with the baseline tuning only.
	Versus         string   `json:"versus,omitempty"`
	DecisionReason string   `json:"decision_reason,omitempty"`
	Ratio          *float64 `json:"ratio,omitempty"`
	Low            *float64 `json:"low,omitempty"`
	High           *float64 `json:"high,omitempty"`
	Method         string   `json:"method,omitempty"`
	Confidence     float64  `json:"confidence,omitempty"`
	// Look is the trial count the decision was judged at: the last
	// planned look the cell reached (0: the decision is on all trials).
	Look int `json:"look,omitempty"`
	// Held is the trial count the controller held the cell to before
	// any decision, its trials possibly few-valued (adaptive.Hold; the
	// reason says why); 0 when it was not held, in a fixed design, and
	// in runs before it was recorded.
	Held int `json:"held,omitempty"`
	// ToDecide is, for an undecided cell, about how many trials would
	// decide it if its difference and spread held (0: unknown, or none up
	// to a thousand).
	ToDecide int `json:"trials_to_decide,omitempty"`
	// TrialSeconds is the mean machine time of the cell's trials as the
	// runner counted it (pause, knobs and collectors included); 0 in runs
	// before it was recorded.
	TrialSeconds float64 `json:"trial_seconds,omitempty"`
	// Failed is why a cell could not be measured: a trial failed every
	// attempt, its set-up did (GaveUpAtSetUp), or the budget ran out.
	Failed string `json:"failed,omitempty"`
	// VersusFailed says, for a cell whose baseline (what Versus names)
	// the runner gave up, which cell that was and why: the cell's own
	// trials are counted, but its decision rests on the rounds before
	// that (an adaptive design stops it then, a fixed one runs its count
	// without the baseline), and no rerun is offered to decide it.
	VersusFailed string `json:"versus_failed,omitempty"`
}
