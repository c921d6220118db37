package cpp

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// TestSamplingProbeDirNamesItsProcess: the sampling probe's temporary
// directory is named after this process (pid and start time), so that
// `cnibench cleanup` removes it should the process be killed during the
// probe (journal.DeadOwnTemps); it was cnibench-perf-probe-RANDOM, which
// nothing removed.
func TestSamplingProbeDirNamesItsProcess(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var dir string
	run := func(ctx context.Context, argv []string) ([]byte, error) {
		if argv[1] == "record" {
			dir = filepath.Dir(argv[len(argv)-3]) // -o DIR/perf.data -- true
			return nil, nil
		}
		return fakePerf(t, "stat-cycles-supported.model.txt", nil)(ctx, argv)
	}
	ChooseEvent(context.Background(), run)
	if filepath.Dir(dir) != tmp {
		t.Fatalf("probe directory %q, want one in TMPDIR %s", dir, tmp)
	}
	own := journal.OwnTempPattern(ProbeTemp)
	if matched, _ := filepath.Match(own, filepath.Base(dir)); !matched || own == "cnibench-"+ProbeTemp+"-*" {
		t.Fatalf("probe directory %s does not match %s, a name that says its process", filepath.Base(dir), own)
	}
}
