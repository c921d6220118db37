package prove

import (
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
)

// --budget bounds a fixed-trials A/B too: --set trials=20 --set
// duration=30s with a 5m budget planned no budget at all (about 40
// minutes per candidate), though a budget caps a fixed design in any
// study. The fixed count stands: only the built-in adaptive A/B's
// maximum follows the budget.
func TestPlanBudgetsAFixedDesign(t *testing.T) {
	e, in, resolve, cat := rfsHere(t)
	s, _, err := Plan(Options{Resolve: resolve, Budget: 5 * time.Minute, Sets: []string{"trials=20", "duration=30s"}}, e, in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Trials != study.Fixed(20) || s.Spec.Budget.Duration != 5*time.Minute {
		t.Errorf("trials %+v, budget %s; want a fixed 20 within 5m", s.Spec.Trials, s.Spec.Budget.Duration)
	}
	y, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := study.Parse("study.yaml", y, study.Options{}, cat); err != nil || back.Spec.Budget != s.Spec.Budget {
		t.Errorf("the planned study parsed back as %v, %v", back, err)
	}
	// No budget given (a caller that sets none): none planned.
	if s, _, err := Plan(Options{Resolve: resolve, Sets: []string{"trials=20"}}, e, in); err != nil || s.Spec.Budget.Duration != 0 {
		t.Errorf("without a budget: %v, %s", err, s.Spec.Budget.Duration)
	}
}
