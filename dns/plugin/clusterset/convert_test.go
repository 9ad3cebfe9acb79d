package clusterset

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestImportFromObject(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1beta1",
		"kind":       "ServiceImport",
		"metadata":   map[string]any{"namespace": "demo", "name": "nginx-hello"},
		"spec": map[string]any{
			"type":  "ClusterSetIP",
			"ips":   []any{"10.96.0.10"},
			"ports": []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)}, map[string]any{"port": int64(9090)}},
		},
	}}
	want := Import{Namespace: "demo", Name: "nginx-hello", Type: TypeClusterSetIP, IPs: []string{"10.96.0.10"},
		Ports: []Port{{Name: "http", Protocol: "TCP", Port: 80}, {Port: 9090}}}
	if got := importFromObject(u); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestImportFromObjectWithoutSpecFields(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "demo", "name": "x"}, "spec": map[string]any{"ports": "wrong"}}}
	want := Import{Namespace: "demo", Name: "x"}
	if got := importFromObject(u); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestSliceFromEndpointSlice(t *testing.T) {
	name, proto, port := "pg", corev1.ProtocolTCP, int32(5432)
	yes, no, host := true, false, "db-0"
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "db-cls2-abc", Labels: map[string]string{
			labelServiceName: "db", labelSourceCluster: "cls2"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}, {}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.2.0.5"}, Hostname: &host, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
			{Addresses: []string{"10.2.0.6"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
			{Addresses: []string{"10.2.0.7"}},
		},
	}
	want := Slice{ClusterID: "cls2", Ports: []Port{{Name: "pg", Protocol: "TCP", Port: 5432}, {}}, Endpoints: []Endpoint{
		{Addresses: []string{"10.2.0.5"}, Hostname: "db-0", Ready: true},
		{Addresses: []string{"10.2.0.6"}, Ready: false},
		{Addresses: []string{"10.2.0.7"}, Ready: true}, // unset readiness means ready
	}}
	if got := sliceFromEndpointSlice(es); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
