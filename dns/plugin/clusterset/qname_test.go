package clusterset

import "testing"

func TestParseName(t *testing.T) {
	const zone = "clusterset.local."
	tests := []struct {
		qname string
		want  mcsName
	}{
		{"clusterset.local.", mcsName{kind: kindApex}},
		{"ClusterSet.Local.", mcsName{kind: kindApex}},
		{"dns-version.clusterset.local.", mcsName{kind: kindVersion}},
		{"svc.clusterset.local.", mcsName{kind: kindSvc}},
		{"demo.svc.clusterset.local.", mcsName{kind: kindNamespace, namespace: "demo"}},
		{"nginx.demo.svc.clusterset.local.", mcsName{kind: kindService, namespace: "demo", service: "nginx"}},
		{"NGINX.Demo.svc.clusterset.local.", mcsName{kind: kindService, namespace: "demo", service: "nginx"}},
		{"cls1.db.demo.svc.clusterset.local.", mcsName{kind: kindCluster, namespace: "demo", service: "db", cluster: "cls1"}},
		{"db-0.cls1.db.demo.svc.clusterset.local.", mcsName{kind: kindEndpoint, namespace: "demo", service: "db", cluster: "cls1", hostname: "db-0"}},
		{"_tcp.db.demo.svc.clusterset.local.", mcsName{kind: kindProto, namespace: "demo", service: "db", proto: "tcp"}},
		{"_pg._tcp.db.demo.svc.clusterset.local.", mcsName{kind: kindPortProto, namespace: "demo", service: "db", port: "pg", proto: "tcp"}},
		// Not names of the specification.
		{"other.clusterset.local.", mcsName{}},
		{"nginx.demo.pod.clusterset.local.", mcsName{}},
		{"_pg.cls1.db.demo.svc.clusterset.local.", mcsName{}},
		{"db-0._tcp.db.demo.svc.clusterset.local.", mcsName{}},
		{"a.db-0.cls1.db.demo.svc.clusterset.local.", mcsName{}},
		{"nginx.demo.svc.cluster.local.", mcsName{}},
		{"xclusterset.local.", mcsName{}},
	}
	for _, tt := range tests {
		if got := parseName(tt.qname, zone); got != tt.want {
			t.Errorf("parseName(%q) = %+v, want %+v", tt.qname, got, tt.want)
		}
	}
}

func TestParseNameInOtherZone(t *testing.T) {
	got := parseName("nginx.demo.svc.mcs.example.", "mcs.example.")
	want := mcsName{kind: kindService, namespace: "demo", service: "nginx"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
