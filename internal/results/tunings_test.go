package results

import (
	"reflect"
	"testing"
)

// Trials of one tuning merge into one entry per place, knob and value:
// devices and found values are unioned (a second replica count adds
// veths), a new value (a mask that followed the busiest core) is an
// entry of its own, and the order is host, node, pods.
func TestMergeSettings(t *testing.T) {
	first := []TuningSetting{
		{Where: WherePods, Knob: "rps_cpus", Value: "1", Devices: []string{"eth0"}, Found: []string{"0"}},
		{Where: WhereNode, Knob: "rps_cpus", Value: "1", Devices: []string{"eth1", "cali0"}, Found: []string{"0"}},
	}
	second := []TuningSetting{
		{Where: WhereNode, Knob: "rps_cpus", Value: "1", Devices: []string{"cali1", "eth1"}, Found: []string{"0", "2"}},
		{Where: WhereNode, Knob: "rps_cpus", Value: "2", Devices: []string{"eth1"}, Found: []string{"0"}},
		{Where: WhereHost, Knob: "net.core.busy_read", Value: "50", Found: []string{"0"}},
	}
	got := MergeSettings(MergeSettings(nil, first), second)
	want := []TuningSetting{
		{Where: WhereHost, Knob: "net.core.busy_read", Value: "50", Found: []string{"0"}},
		{Where: WhereNode, Knob: "rps_cpus", Value: "1", Devices: []string{"cali0", "cali1", "eth1"}, Found: []string{"0", "2"}},
		{Where: WhereNode, Knob: "rps_cpus", Value: "2", Devices: []string{"eth1"}, Found: []string{"0"}},
		{Where: WherePods, Knob: "rps_cpus", Value: "1", Devices: []string{"eth0"}, Found: []string{"0"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged:\n%+v\nwant:\n%+v", got, want)
	}
	if !reflect.DeepEqual(MergeSettings(got, second), got) {
		t.Error("merging what is already there changed the record")
	}
	// A place counts as unchanged only while every trial found the value.
	held := TuningSetting{Where: WhereHost, Knob: "net.ipv4.tcp_congestion_control", Value: "bbr", Found: []string{"bbr"}, Unchanged: true}
	once := MergeSettings(nil, []TuningSetting{held})
	if !ChangedNothing(once) {
		t.Errorf("a setting found in place everywhere: %+v, ChangedNothing false", once)
	}
	moved := held
	moved.Found, moved.Unchanged = []string{"cubic"}, false
	if twice := MergeSettings(once, []TuningSetting{moved}); twice[0].Unchanged || ChangedNothing(twice) {
		t.Errorf("a setting one trial changed: %+v still unchanged", twice)
	}
	if ChangedNothing(nil) {
		t.Error("a tuning without a record (a baseline) counts as changing nothing")
	}
	if first[1].Devices[0] != "eth1" {
		t.Error("MergeSettings sorted its argument's devices in place")
	}
}
