package analysis

import (
	"encoding/csv"
	"io"
	"strconv"
)

// CSVHeader is summary.csv's header: one tidy row per cell, metric and
// core. Columns are only ever added at the end, so scripts that read
// them by position keep working.
var CSVHeader = []string{
	"datapath", "tuning", "workload", "replicas", "metric", "cpu", "unit", "n",
	"mean", "sd", "ci95_low", "ci95_high",
	"normalized", "normalized_ci95_low", "normalized_ci95_high",
	"p_vs_baseline", "p_vs_first_datapath", "impairment",
}

// WriteCSV writes rows as summary.csv. Values keep the metric's raw unit
// (bitrates in bit/s) at full precision; cpu is empty for metrics that are
// not per core, the normalized fields are empty where not applicable, and
// any undefined statistic (n = 0, sd with n = 1, a p value without two
// observations on each side) is empty, not "NaN".
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range rows {
		cpu := ""
		if r.CPU >= 0 {
			cpu = strconv.Itoa(r.CPU)
		}
		rec := []string{
			r.Datapath, r.Tuning, r.Workload, strconv.Itoa(r.Replicas), r.Metric, cpu, r.Unit,
			strconv.Itoa(r.N), num(r.Mean), num(r.SD), num(r.CI95Low), num(r.CI95High),
			"", "", "", num(r.PBaseline), num(r.PFirstDatapath), r.Impairment,
		}
		if r.HasNorm {
			rec[12], rec[13], rec[14] = num(r.Normalized), num(r.NormCI95Low), num(r.NormCI95High)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string {
	if !Finite(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
