package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
)

func mark(pass bool) string {
	if pass {
		return "✓"
	}
	return "✗"
}

// verdictTable lays the model's verdicts out as the seed-003 paper's
// Table IX: a row per datapath and workload variant, a column per
// impairment; each cell is our verdict, the paper's beside it, and "≠"
// where they disagree.
func verdictTable(m analysis.Model) table {
	if len(m.Verdicts) == 0 {
		return table{}
	}
	var cols []string
	colIdx := map[string]int{}
	type rk struct{ dp, wl string }
	var rows []rk
	rowIdx := map[rk]int{}
	for _, v := range m.Verdicts {
		if _, ok := colIdx[v.Impairment]; !ok {
			colIdx[v.Impairment] = len(cols)
			cols = append(cols, v.Impairment)
		}
		k := rk{v.Datapath, v.Workload}
		if _, ok := rowIdx[k]; !ok {
			rowIdx[k] = len(rows)
			rows = append(rows, k)
		}
	}
	t := table{Head: []string{"datapath", "workload"}}
	for _, c := range cols {
		if c == "" {
			c = "none"
		}
		t.Head = append(t.Head, c)
	}
	t.Rows = make([][]string, len(rows))
	for i, k := range rows {
		t.Rows[i] = append([]string{k.dp, k.wl}, make([]string, len(cols))...)
	}
	for _, v := range m.Verdicts {
		cell := mark(v.Pass)
		if v.Paper != nil {
			cell += " (paper " + mark(*v.Paper) + ")"
			if v.Disagree {
				cell += " ≠"
			}
		}
		t.Rows[rowIdx[rk{v.Datapath, v.Workload}]][2+colIdx[v.Impairment]] = cell
	}
	return t
}

// verdictCaption says what the verdicts were judged by.
func verdictCaption(m analysis.Model) string {
	return "Verdict per datapath, workload and impairment by the study's criteria (" + m.VerdictCriteria +
		"); \"paper\" is the published verdict (Table IX), ≠ marks a disagreement. summary.json has why each cell failed."
}

// boundTable sets the Ethernet bound of each saturated UDP cell's
// encapsulation beside its measured receiver bitrate.
func boundTable(m analysis.Model) table {
	if len(m.Bounds) == 0 {
		return table{}
	}
	t := table{Head: []string{"datapath", "workload", "impairment", "link (Mbit/s)", "encap (B)", "payload (B)",
		"offered (Mbit/s)", "bound (Mbit/s)", "measured (Mbit/s)", "measured / bound"}}
	for _, b := range m.Bounds {
		imp := b.Impairment
		if imp == "" {
			imp = "none"
		}
		t.Rows = append(t.Rows, []string{b.Datapath, b.Workload, imp, mbit(b.LinkBits), fmt.Sprint(b.Encap), fmt.Sprint(b.Payload),
			mbit(b.Offered), mbit(b.Bound), mbit(b.Measured), fmt.Sprintf("%.3f", b.Measured/b.Bound)})
	}
	return t
}

func mbit(bps float64) string { return fmt.Sprintf("%.1f", bps/1e6) }

const boundCaption = "Saturated UDP cells on the shaped link: the highest receiver bitrate the link carries when each datagram pays " +
	"UDP/IPv4 headers, the datapath's encapsulation and Ethernet framing (header, preamble, FCS, inter-frame gap), beside the measured one."
