package kube

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// The workload pods' image is a reference; pinned by tag (kube install
// --allow-tag) each node resolves it itself, maybe to another image.
// What each node resolved it to is what the ready pods' containers
// report (status imageID), recorded by node once they are ready: here a
// tag the two nodes pulled as two images. Before, env.json had the
// reference alone, and two runs of one tag read as one image.
func TestScaleRecordsResolvedImages(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	const tag = "registry.example.com/cnibench:v1"
	setAgentImage(t, cs, "agent-a", tag, "registry.example.com/cnibench@"+digestA)
	setAgentImage(t, cs, "agent-b", tag, "registry.example.com/cnibench@"+digestA)
	resolved := map[string]string{"w1": "registry.example.com/cnibench@" + digestA, "w2": "registry.example.com/cnibench@" + digestB}
	ip := 50
	// As the fixture's reactor, with each node's image ID; it creates
	// the pod itself, or the fixture's would set the status again.
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		ip++
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.244.1.%d", ip),
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true, ImageID: resolved[p.Spec.NodeName]}}}
		return true, p, cs.Tracker().Create(corev1.SchemeGroupVersion.WithResource("pods"), p, p.Namespace)
	})
	c := upQuiet(t, cs, cfg, place)
	if got := c.ResolvedImages(); len(got) != 0 {
		t.Errorf("before any workload pod: %v, want none", got)
	}
	if _, _, err := c.Scale(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"w1": {resolved["w1"]}, "w2": {resolved["w2"]}}
	if got := c.ResolvedImages(); !reflect.DeepEqual(got, want) {
		t.Errorf("resolved images %v, want %v (each node's, once)", got, want)
	}
}
