// Package clusterset is a CoreDNS plugin serving the Kubernetes Multi-Cluster Services DNS names
// (<svc>.<ns>.svc.clusterset.local and the names below it, D1, D2) from one cluster's ServiceImports, MCS
// EndpointSlices and Namespaces. The record logic (qname.go, records.go, targets.go, rr.go) is pure over plain data
// (model.go); store.go fills that data from client-go informers.
package clusterset
