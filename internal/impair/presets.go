package impair

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Preset is a named Spec with where it comes from.
type Preset struct {
	Name string
	Spec Spec
	// TC is the configuration as the source wrote it.
	TC string
	// Source cites it.
	Source string
}

// tableII cites the table the paper's presets come from.
const tableII = "Santos et al., A Comprehensive Benchmark of Flannel CNI in SDN/non-SDN Enabled Cloud-Native Environments, Table II (seed 003)"

// The paper's three delay levels: delay, ±jitter (uniform, netem's
// default) and 25% correlation; combined with 5% loss or corruption in
// delay-loss and delay-corruption.
var (
	delayLow    = Spec{Delay: 10 * time.Millisecond, Jitter: time.Millisecond, DelayCorrelation: 25}
	delayMedium = Spec{Delay: 100 * time.Millisecond, Jitter: 10 * time.Millisecond, DelayCorrelation: 25}
	delayHigh   = Spec{Delay: 500 * time.Millisecond, Jitter: 50 * time.Millisecond, DelayCorrelation: 25}
)

func with(s Spec, f func(*Spec)) Spec { f(&s); return s }

func withLoss(s Spec, p float64) Spec    { return with(s, func(s *Spec) { s.Loss = p }) }
func withCorrupt(s Spec, p float64) Spec { return with(s, func(s *Spec) { s.Corrupt = p }) }

// presets is the one list: "none" (the paper's baseline, "no tc rule
// added") and Table II's fifteen test/type cells, named test-type. Each
// keeps netem's defaults where the paper's tc command gave none: queue
// limit 1000 packets, uniform jitter, no correlation of loss or
// corruption.
var presets = []Preset{
	{"none", Spec{}, "no tc rule added", tableII},
	{"delay-low", delayLow, "10 ms 1ms 25%", tableII},
	{"delay-medium", delayMedium, "100 ms 10ms 25%", tableII},
	{"delay-high", delayHigh, "500 ms 50ms 25%", tableII},
	{"loss-low", Spec{Loss: 5}, "loss 5%", tableII},
	{"loss-medium", Spec{Loss: 20}, "loss 20%", tableII},
	{"loss-high", Spec{Loss: 60}, "loss 60%", tableII},
	{"corruption-low", Spec{Corrupt: 5}, "corrupt 5%", tableII},
	{"corruption-medium", Spec{Corrupt: 20}, "corrupt 20%", tableII},
	{"corruption-high", Spec{Corrupt: 40}, "corrupt 40%", tableII},
	{"delay-loss-low", withLoss(delayLow, 5), "10 ms 1ms 25% - loss 5%", tableII},
	{"delay-loss-medium", withLoss(delayMedium, 5), "100 ms 10ms 25% - loss 5%", tableII},
	{"delay-loss-high", withLoss(delayHigh, 5), "500 ms 50ms 25% - loss 5%", tableII},
	{"delay-corruption-low", withCorrupt(delayLow, 5), "10 ms 1ms 25% - corrupt 5%", tableII},
	{"delay-corruption-medium", withCorrupt(delayMedium, 5), "100 ms 10ms 25% - corrupt 5%", tableII},
	{"delay-corruption-high", withCorrupt(delayHigh, 5), "500 ms 50ms 25% - corrupt 5%", tableII},
}

// Presets returns every preset in Table II's order, "none" first.
func Presets() []Preset { return slices.Clone(presets) }

// PresetNames returns the presets' names in the same order.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.Name
	}
	return out
}

// LookupPreset returns the preset of that name, or an error listing the
// names.
func LookupPreset(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("unknown impairment preset %q (%sone of %s)", name, suggest.Hint(name, PresetNames()), strings.Join(PresetNames(), ", "))
}
