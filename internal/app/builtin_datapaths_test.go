package app

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
)

// The built-in datapaths study is "every available datapath side by
// side" (and README says `cnibench run datapaths` runs every datapath the
// kernel supports): it names every datapath of the catalogue, each once.
// kube-router joined the catalogue without joining the study.
func TestDatapathsStudyHasEveryDatapath(t *testing.T) {
	for _, profile := range []string{"", "quick"} {
		s, err := study.Resolve("datapaths", study.Options{Profile: profile}, studyCatalog())
		if err != nil {
			t.Fatal(err)
		}
		got := s.DatapathNames()
		slices.Sort(got)
		if want := catalog.Names(); !slices.Equal(got, want) {
			t.Errorf("the datapaths study (profile %q) measures %v, the catalogue has %v", profile, got, want)
		}
	}
}
