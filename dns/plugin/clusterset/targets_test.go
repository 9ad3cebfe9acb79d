package clusterset

import (
	"reflect"
	"testing"
)

func TestReadyTargets(t *testing.T) {
	got := readyTargets(demo().slices["demo/db"])
	pg := []Port{{Name: "pg", Protocol: "TCP", Port: 15432}}
	want := []target{
		{cluster: "cls1", hostname: "db-0", addresses: []string{"10.1.0.5"}, ports: pg},
		{cluster: "cls2", hostname: "10-2-0-7", addresses: []string{"10.2.0.7"}},
		{cluster: "cls2", hostname: "db-2", addresses: []string{"fd00:2::8"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readyTargets:\n got %+v\nwant %+v", got, want)
	}
}

func TestReadyTargetsMergesOneHostnameOfACluster(t *testing.T) {
	got := readyTargets([]Slice{
		{ClusterID: "cls1", Endpoints: []Endpoint{{Addresses: []string{"10.0.0.1"}, Hostname: "Web", Ready: true}}},
		{ClusterID: "cls1", Endpoints: []Endpoint{{Addresses: []string{"fd00::1", "10.0.0.1"}, Hostname: "web", Ready: true}}},
		{ClusterID: "cls2", Endpoints: []Endpoint{{Addresses: []string{"10.0.0.1"}, Hostname: "web", Ready: true}}},
	})
	want := []target{
		{cluster: "cls1", hostname: "web", addresses: []string{"10.0.0.1", "fd00::1"}},
		{cluster: "cls2", hostname: "web", addresses: []string{"10.0.0.1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readyTargets:\n got %+v\nwant %+v", got, want)
	}
}

func TestAddressLabel(t *testing.T) {
	for address, want := range map[string]string{
		"10.1.2.3":                  "10-1-2-3",
		"fd00:0:0::1":               "fd00--1",
		"2001:DB8::8:800:200C:417A": "2001-db8--8-800-200c-417a",
	} {
		if got := addressLabel(address); got != want {
			t.Errorf("addressLabel(%q) = %q, want %q", address, got, want)
		}
	}
}
