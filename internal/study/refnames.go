package study

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/suggest"
)

// A reference's names (datapath, workload, tuning, impairment) are
// checked like a published verdict's (published.go): a name is known
// when the run's study has it or the file itself does, in spec or any
// profile, so that a reference to a cell a profile or --set leaves out
// is listed as not measured, and a misspelt one (`flannell`, `http@c400`
// where the sweep is [1, 8], `rsf+`) is refused instead of standing in
// the report as "a datapath this run did not measure".
//
// A run's study.yaml keeps every reference (the report lists those of
// datapaths it did not measure), but its spec holds only what ran: the
// engine drops the datapaths this machine cannot build, a cluster run
// keeps one, --set and the profile are applied. Read again (Options.Stored:
// a resume, advise --run, compare, the report), its references' names
// are not checked: the spec is what ran, the file was checked when the
// run began, and a check there would refuse every run that left a
// referenced datapath out (study.yaml is hashed, so it cannot be marked
// after the fact either).

// refName is one name field of a reference.
type refName struct {
	key, what, name string
}

// names are the reference's datapath, workload, tuning and impairment
// names, with their keys.
func (r Reference) names() []refName {
	return []refName{
		{"datapath", "datapath", r.Datapath}, {"against", "datapath", r.Against},
		{"workload", "workload", r.Workload}, {"againstWorkload", "workload", r.AgainstWorkload},
		{"tuning", "tuning", r.Tuning}, {"impairment", "impairment", r.Impairment},
	}
}

// knownNames are the names a reference may use: the run's and the file's,
// and "none", the unimpaired cells' impairment, which every study has.
func (s *Study) knownNames() *cellNames {
	known := s.runNames()
	if w := s.written; w != nil {
		known.union(w)
	}
	known.impairments = appendNew(known.impairments, NoImpairment)
	return known
}

// of is c's list of names of the kind what names.
func (c *cellNames) of(what string) []string {
	switch what {
	case "datapath":
		return c.datapaths
	case "workload":
		return c.workloads
	case "tuning":
		return c.tunings
	}
	return c.impairments
}

// validateReferenceNames refuses a reference naming a datapath, a
// workload (an entry or one variant of its sweep), a tuning or an
// impairment that neither the run's study nor the file has.
func validateReferenceNames(s *Study, bad badFunc) {
	if s.stored {
		return
	}
	known := s.knownNames()
	for i, r := range s.Spec.Reference {
		for _, n := range r.names() {
			if n.name != "" {
				refuseUnknown(bad, fmt.Sprintf("spec.reference[%d].%s", i, n.key), n.what, n.name, known.of(n.what))
			}
		}
	}
}

// ReferenceWarnings are the references whose metric is one slip (a
// letter added, dropped, changed or two swapped: suggest.Slip) from a
// headline metric of a tool of the study, each as "FILE:LINE:
// spec.reference[i].metric: ...". Such a metric cannot be refused: tools
// report more than the headline metrics they declare (iperf3's
// retransmits, sockperf's rtt_max_us, the cpu collector's core_idle),
// so an unknown name alone proves nothing, and is not warned of; one a
// letter from a headline one ("request_per_s") is most likely a slip.
// A collector's metric is not warned of either.
func (s *Study) ReferenceWarnings(cat Catalog) []string {
	var known []string
	for _, w := range s.Spec.Workloads {
		if t, ok := cat.Tool(w.Tool); ok {
			for _, m := range t.HeadlineFor(w.Protocol) {
				known = appendNew(known, m)
			}
		}
	}
	var out []string
	for i, r := range s.Spec.Reference {
		if r.Metric == "" || slices.Contains(known, r.Metric) || collectorMetric(cat, r.Metric) {
			continue
		}
		slip := suggest.Slip(r.Metric, known)
		if slip == "" {
			continue
		}
		fe := &FieldError{File: s.Source, Field: fmt.Sprintf("spec.reference[%d].metric", i), Msg: fmt.Sprintf(
			"%q is no metric of the study's tools: did you mean %q? (the report lists the reference as not measured unless a tool reports %q besides its headline metrics)",
			r.Metric, slip, r.Metric)}
		if s.where != nil {
			fe.Line, fe.Origin = s.where(fe.Field)
		}
		out = append(out, fe.Error())
	}
	return out
}

// collectorMetric says whether a collector adds the metric: its names in
// collect.Entry.Metrics are patterns (the part before a space, "iptables_*",
// "if_{underlay,tunnel,pods}_{rx,tx}_{packets,dropped}_count",
// "daemon_NAME_NODE_cpu_pct": an upper-case word stands for any part).
func collectorMetric(cat Catalog, metric string) bool {
	for _, pat := range cat.CollectorMetrics {
		pat, _, _ = strings.Cut(pat, " ")
		if metricPattern(pat).MatchString(metric) {
			return true
		}
	}
	return false
}

// metricPattern is pat as an anchored regular expression: "*" and an
// upper-case word match any part, "{a,b}" one of its alternatives, and
// the rest itself.
func metricPattern(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for pat != "" {
		switch {
		case pat[0] == '*':
			b.WriteString(".+")
			pat = pat[1:]
		case pat[0] == '{' && strings.Contains(pat, "}"):
			alts, rest, _ := strings.Cut(pat[1:], "}")
			parts := strings.Split(alts, ",")
			for i, p := range parts {
				parts[i] = regexp.QuoteMeta(p)
			}
			b.WriteString("(?:" + strings.Join(parts, "|") + ")")
			pat = rest
		case pat[0] >= 'A' && pat[0] <= 'Z':
			n := strings.IndexFunc(pat, func(r rune) bool { return r < 'A' || r > 'Z' })
			if n < 0 {
				n = len(pat)
			}
			b.WriteString(".+")
			pat = pat[n:]
		default:
			n := 1 + strings.IndexAny(pat[1:], "*{ABCDEFGHIJKLMNOPQRSTUVWXYZ")
			if n == 0 {
				n = len(pat)
			}
			b.WriteString(regexp.QuoteMeta(pat[:n]))
			pat = pat[n:]
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
