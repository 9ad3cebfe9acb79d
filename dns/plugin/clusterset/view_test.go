package clusterset

// snapshot is a View over plain maps, the data a test states.
type snapshot struct {
	imports    map[string]Import  // key "<ns>/<name>"
	slices     map[string][]Slice // key "<ns>/<service>"
	namespaces map[string]bool
	synced     bool
	serial     uint32
}

func (s snapshot) ServiceImport(namespace, name string) (Import, bool) {
	imp, ok := s.imports[namespace+"/"+name]
	return imp, ok
}

func (s snapshot) EndpointSlices(namespace, name string) []Slice { return s.slices[namespace+"/"+name] }

func (s snapshot) NamespaceExists(namespace string) bool { return s.namespaces[namespace] }

func (s snapshot) Synced() bool { return s.synced }

func (s snapshot) Serial() uint32 { return s.serial }

// demo is a ClusterSet seen from one cluster: a ClusterSetIP import (dual-stack, one named and one unnamed port) and
// a Headless import with endpoints in two clusters, one of them not ready and one without a hostname.
func demo() snapshot {
	return snapshot{
		synced:     true,
		serial:     42,
		namespaces: map[string]bool{"demo": true, "empty": true},
		imports: map[string]Import{
			"demo/nginx-hello": {Namespace: "demo", Name: "nginx-hello", Type: TypeClusterSetIP,
				IPs:   []string{"10.96.0.10", "fd00::a"},
				Ports: []Port{{Name: "http", Protocol: "TCP", Port: 80}, {Port: 9090}}},
			"demo/db": {Namespace: "demo", Name: "db", Type: TypeHeadless,
				Ports: []Port{{Name: "pg", Protocol: "TCP", Port: 5432}, {Name: "metrics", Protocol: "UDP", Port: 9187}}},
			"demo/idle": {Namespace: "demo", Name: "idle", Type: TypeHeadless, Ports: []Port{{Name: "pg", Port: 5432}}},
		},
		slices: map[string][]Slice{
			"demo/db": {
				{ClusterID: "cls1", Ports: []Port{{Name: "pg", Protocol: "TCP", Port: 15432}}, Endpoints: []Endpoint{
					{Addresses: []string{"10.1.0.5"}, Hostname: "db-0", Ready: true},
					{Addresses: []string{"10.1.0.6"}, Hostname: "db-1", Ready: false},
				}},
				{ClusterID: "cls2", Endpoints: []Endpoint{
					{Addresses: []string{"10.2.0.7"}, Ready: true},
					{Addresses: []string{"fd00:2::8"}, Hostname: "db-2", Ready: true},
				}},
			},
			"demo/idle": {{ClusterID: "cls1", Endpoints: []Endpoint{{Addresses: []string{"10.1.0.9"}, Ready: false}}}},
		},
	}
}
