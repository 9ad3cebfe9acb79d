package clusterset

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Labels on MCS EndpointSlices (S2; the same values as src/core/names.ts).
const (
	labelServiceName   = "multicluster.kubernetes.io/service-name"
	labelSourceCluster = "multicluster.kubernetes.io/source-cluster"
)

// importFromObject reads the fields DNS needs from a ServiceImport (v1alpha1 and v1beta1 share the schema).
// Fields of the wrong shape read as absent: the CRD's schema already refuses them.
func importFromObject(u *unstructured.Unstructured) Import {
	imp := Import{Namespace: u.GetNamespace(), Name: u.GetName()}
	imp.Type, _, _ = unstructured.NestedString(u.Object, "spec", "type")
	imp.IPs, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "ips")
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	for _, p := range ports {
		fields, ok := p.(map[string]any)
		if !ok {
			continue
		}
		port := Port{}
		port.Name, _, _ = unstructured.NestedString(fields, "name")
		port.Protocol, _, _ = unstructured.NestedString(fields, "protocol")
		number, _, _ := unstructured.NestedInt64(fields, "port")
		port.Port = int32(number)
		imp.Ports = append(imp.Ports, port)
	}
	return imp
}

// sliceFromEndpointSlice reads an MCS EndpointSlice. An endpoint whose ready condition is unset counts as ready, as
// the EndpointSlice API asks consumers to do.
func sliceFromEndpointSlice(es *discoveryv1.EndpointSlice) Slice {
	s := Slice{ClusterID: es.Labels[labelSourceCluster]}
	for _, p := range es.Ports {
		port := Port{}
		if p.Name != nil {
			port.Name = *p.Name
		}
		if p.Protocol != nil {
			port.Protocol = string(*p.Protocol)
		}
		if p.Port != nil {
			port.Port = *p.Port
		}
		s.Ports = append(s.Ports, port)
	}
	for _, e := range es.Endpoints {
		endpoint := Endpoint{Addresses: e.Addresses, Ready: e.Conditions.Ready == nil || *e.Conditions.Ready}
		if e.Hostname != nil {
			endpoint.Hostname = *e.Hostname
		}
		s.Endpoints = append(s.Endpoints, endpoint)
	}
	return s
}
