package results

import "testing"

// env.json keeps which form of its CNI's datapath a datapath built and
// what the stand-in changes (weave's bridge in place of Open vSwitch),
// under datapaths.NAME.mode and .stand_in; a run before they were
// recorded reads neither.
func TestLoadDatapathMode(t *testing.T) {
	dir := writeRaw(t, map[string]string{StudyFile: "a: 1\n", EnvFile: `{"engine":"local","datapaths":{` +
		`"weave":{"type":"weave","mode":"bridge","stand_in":"a Linux bridge stands in"},"old":{"type":"weave"}}}`})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w := r.Env.Datapaths["weave"]; w.Mode != "bridge" || w.StandIn != "a Linux bridge stands in" {
		t.Errorf("weave: mode %q, stand-in %q", w.Mode, w.StandIn)
	}
	if o := r.Env.Datapaths["old"]; o.Mode != "" || o.StandIn != "" {
		t.Errorf("a run before the mode was recorded: mode %q, stand-in %q", o.Mode, o.StandIn)
	}
}
