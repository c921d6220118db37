package results

import "fmt"

// GaveUp is why a cell was given up after trial failed every attempt
// (Stop.Failed): the runner writes it, and compare reads the same from a
// run's attempts when it has no stops.json.
func GaveUp(trial, attempts int, last string) string {
	return fmt.Sprintf("trial %d failed %d attempts; last: %s", trial, attempts, last)
}

// SetUpFailed is Sample.Discarded of the record of a cell given up
// because what its trial was to run on could not be set up: its
// datapath's cluster and knobs, or its replica count's pods, every
// attempt. The runner writes one such record per cell, at the trial it
// gave the cell up at, with GaveUpAtSetUp's why as its Error and no
// metrics; unlike a failed trial's attempts, one record gives the cell
// up, however many attempts the trial had (a resumed run keeps it given
// up, and analysis and compare read it as a given-up cell).
const SetUpFailed = "set-up failed"

// GaveUpAtSetUp is why a cell was given up at trial because its set-up
// failed attempts times, last with last (SetUpFailed's Error, and
// Stop.Failed).
func GaveUpAtSetUp(trial, attempts int, last string) string {
	return fmt.Sprintf("trial %d: its set-up failed %d attempts; last: %s", trial, attempts, last)
}
