package results

// Judged is the trial count the stop's decision rests on: the look it
// was judged at, else the trials with the metric (else, in runs that did
// not record them, the trials run).
func (s Stop) Judged() int {
	switch {
	case s.Look > 0:
		return s.Look
	case s.Valid > 0:
		return s.Valid
	}
	return s.N
}
