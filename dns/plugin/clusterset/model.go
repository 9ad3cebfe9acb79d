package clusterset

// The plain data the record logic reads: what a cluster's ServiceImports, MCS EndpointSlices and Namespaces say,
// without client-go types, so the DNS semantics can be tested as pure functions.

// ServiceImport spec.type values (K2).
const (
	TypeClusterSetIP = "ClusterSetIP"
	TypeHeadless     = "Headless"
)

// Port is one ServiceImport or EndpointSlice port.
type Port struct {
	Name     string
	Protocol string // TCP, UDP or SCTP; empty means TCP
	Port     int32
}

// Import is one ServiceImport.
type Import struct {
	Namespace string
	Name      string
	Type      string
	IPs       []string
	Ports     []Port
}

// Endpoint is one EndpointSlice endpoint.
type Endpoint struct {
	Addresses []string
	Hostname  string
	Ready     bool
}

// Slice is one EndpointSlice labelled multicluster.kubernetes.io/service-name; ClusterID comes from its
// multicluster.kubernetes.io/source-cluster label.
type Slice struct {
	ClusterID string
	Ports     []Port
	Endpoints []Endpoint
}

// View answers the questions the record logic asks about one cluster.
type View interface {
	ServiceImport(namespace, name string) (Import, bool)
	// EndpointSlices returns the slices of the named service in a stable order.
	EndpointSlices(namespace, name string) []Slice
	NamespaceExists(namespace string) bool
}
