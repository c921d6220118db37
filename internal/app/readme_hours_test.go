package app

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// README's machine times of the built-in studies are what Plan gives,
// to the precision they are written in: nic-modes' said 3.4 to 11 hours
// long after its loss-ceiling searches made it 4.3 to 14.4.
var (
	// "50 minutes to 5.5 hours for `rps-rfs`", "65 to 215 hours for
	// `flannel-backends` (the paper's 5-minute trials, 256 cells)".
	readmeRangeRE = regexp.MustCompile("([0-9.]+) (?:(minutes|hours) )?to ([0-9.]+) (minutes|hours) for `([a-z-]+)`(?: \\([^)]*?([0-9]+) cells)?")
	// "cnibench run rps-rfs --profile paper  # ... (~5.5 hours)".
	readmeProfileRE = regexp.MustCompile(`cnibench run ([a-z-]+) --profile ([a-z-]+) .*\(~([0-9.]+) (minutes|hours)\)`)
)

func TestReadmeStudyHours(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	ranges := readmeRangeRE.FindAllStringSubmatch(text, -1)
	if len(ranges) < 4 {
		t.Fatalf("README gives the machine time of %d built-in studies as \"A to B hours for `STUDY`\", want the four seed studies' (reworded? update readmeRangeRE)", len(ranges))
	}
	for _, m := range ranges {
		name, minUnit := m[5], m[2]
		if minUnit == "" {
			minUnit = m[4]
		}
		p := plannedOf(t, name, "")
		checkFigure(t, name+" (default) minimum", m[1], minUnit, p.MinSeconds)
		checkFigure(t, name+" (default) maximum", m[3], m[4], p.MaxSeconds)
		if m[6] != "" && m[6] != strconv.Itoa(int(p.Cells)) {
			t.Errorf("README: %s has %s cells, Plan says %v", name, m[6], p.Cells)
		}
	}
	profiles := readmeProfileRE.FindAllStringSubmatch(string(b), -1)
	if len(profiles) == 0 {
		t.Error(`README's "cnibench run rps-rfs --profile paper ... (~5.5 hours)" not found (reworded? update readmeProfileRE)`)
	}
	for _, m := range profiles {
		checkFigure(t, m[1]+" --profile "+m[2], m[3], m[4], plannedOf(t, m[1], m[2]).MaxSeconds)
	}
}

func plannedOf(t *testing.T, name, profile string) study.Planned {
	t.Helper()
	s, err := study.Resolve(name, study.Options{Profile: profile}, studyCatalog())
	if err != nil {
		t.Fatalf("README names study %s: %v", name, err)
	}
	return s.Plan()
}

// checkFigure wants figure (in unit) to be seconds rounded to the digits
// it is written with: "14.4" hours is 14.35 to 14.45.
func checkFigure(t *testing.T, what, figure, unit string, seconds float64) {
	t.Helper()
	v, err := strconv.ParseFloat(figure, 64)
	if err != nil {
		t.Fatalf("README: %s: %v", what, err)
	}
	per := 3600.0
	if unit == "minutes" {
		per = 60
	}
	decimals := 0
	if _, frac, ok := strings.Cut(figure, "."); ok {
		decimals = len(frac)
	}
	half := 0.5 * math.Pow(10, -float64(decimals))
	if got := seconds / per; math.Abs(got-v) > half+1e-9 {
		t.Errorf("README: %s is %s %s, Plan says %.*f (write it with `cnibench run STUDY --dry-run`'s figure)", what, figure, unit, decimals+1, got)
	}
}
