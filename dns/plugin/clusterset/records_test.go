package clusterset

import (
	"reflect"
	"testing"

	"github.com/miekg/dns"
)

func rrStrings(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		out = append(out, rr.String())
	}
	return out
}

// TestAnswer is the record table of D1 and D2 and the MCS DNS specification §2 over the demo snapshot.
func TestAnswer(t *testing.T) {
	const z = "clusterset.local."
	a := answerer{zone: z, ttl: 5, serial: 42, view: demo()}
	tests := []struct {
		name   string
		qname  string
		qtype  uint16
		rcode  int
		answer []string
		extra  []string
	}{
		{"D1 ClusterSetIP A", "nginx-hello.demo.svc." + z, dns.TypeA, dns.RcodeSuccess,
			[]string{"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tA\t10.96.0.10"}, nil},
		{"D1 ClusterSetIP AAAA", "nginx-hello.demo.svc." + z, dns.TypeAAAA, dns.RcodeSuccess,
			[]string{"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00::a"}, nil},
		{"D1 owner keeps the question's spelling", "Nginx-Hello.demo.svc." + z, dns.TypeA, dns.RcodeSuccess,
			[]string{"Nginx-Hello.demo.svc.clusterset.local.\t5\tIN\tA\t10.96.0.10"}, nil},
		{"D1 ClusterSetIP other type is NODATA", "nginx-hello.demo.svc." + z, dns.TypeMX, dns.RcodeSuccess, nil, nil},
		{"D2 ClusterSetIP SRV targets the service name", "_http._tcp.nginx-hello.demo.svc." + z, dns.TypeSRV, dns.RcodeSuccess,
			[]string{"_http._tcp.nginx-hello.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 100 80 nginx-hello.demo.svc.clusterset.local."},
			[]string{"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tA\t10.96.0.10", "nginx-hello.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00::a"}},
		{"D2 ClusterSetIP SRV of the service name: one per port, named or not", "nginx-hello.demo.svc." + z, dns.TypeSRV, dns.RcodeSuccess,
			[]string{
				"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 50 80 nginx-hello.demo.svc.clusterset.local.",
				"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 50 9090 nginx-hello.demo.svc.clusterset.local.",
			},
			[]string{"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tA\t10.96.0.10", "nginx-hello.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00::a"}},
		{"D2 SRV name asked for A is NODATA", "_http._tcp.nginx-hello.demo.svc." + z, dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"D2 wrong protocol", "_http._udp.nginx-hello.demo.svc." + z, dns.TypeSRV, dns.RcodeNameError, nil, nil},
		{"D2 unknown port name", "_https._tcp.nginx-hello.demo.svc." + z, dns.TypeSRV, dns.RcodeNameError, nil, nil},
		{"D2 _proto node of a named port exists", "_tcp.nginx-hello.demo.svc." + z, dns.TypeSRV, dns.RcodeSuccess, nil, nil},
		{"D2 _proto node without a named port", "_sctp.nginx-hello.demo.svc." + z, dns.TypeSRV, dns.RcodeNameError, nil, nil},
		{"ClusterSetIP has no per-cluster names", "cls1.nginx-hello.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"ClusterSetIP has no per-endpoint names", "x.cls1.nginx-hello.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"D1 Headless A: ready endpoints of every cluster", "db.demo.svc." + z, dns.TypeA, dns.RcodeSuccess,
			[]string{"db.demo.svc.clusterset.local.\t5\tIN\tA\t10.1.0.5", "db.demo.svc.clusterset.local.\t5\tIN\tA\t10.2.0.7"}, nil},
		{"D1 Headless AAAA", "db.demo.svc." + z, dns.TypeAAAA, dns.RcodeSuccess,
			[]string{"db.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00:2::8"}, nil},
		{"D1 Headless without ready endpoints is NXDOMAIN", "idle.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"D1 per-endpoint hostname", "db-0.cls1.db.demo.svc." + z, dns.TypeA, dns.RcodeSuccess,
			[]string{"db-0.cls1.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.1.0.5"}, nil},
		{"D1 per-endpoint name from the address", "10-2-0-7.cls2.db.demo.svc." + z, dns.TypeA, dns.RcodeSuccess,
			[]string{"10-2-0-7.cls2.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.2.0.7"}, nil},
		{"D1 per-endpoint AAAA", "db-2.cls2.db.demo.svc." + z, dns.TypeAAAA, dns.RcodeSuccess,
			[]string{"db-2.cls2.db.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00:2::8"}, nil},
		{"D1 per-endpoint IPv6-only asked A is NODATA", "db-2.cls2.db.demo.svc." + z, dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"D1 unready endpoint has no name", "db-1.cls1.db.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"D1 hostname in another cluster", "db-0.cls2.db.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"cluster node with ready endpoints exists", "cls2.db.demo.svc." + z, dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"cluster node without endpoints", "cls3.db.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"D2 Headless SRV: one per ready endpoint, endpoint port", "_pg._tcp.db.demo.svc." + z, dns.TypeSRV, dns.RcodeSuccess,
			[]string{
				"_pg._tcp.db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 33 15432 db-0.cls1.db.demo.svc.clusterset.local.",
				"_pg._tcp.db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 33 5432 10-2-0-7.cls2.db.demo.svc.clusterset.local.",
				"_pg._tcp.db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 33 5432 db-2.cls2.db.demo.svc.clusterset.local.",
			},
			[]string{
				"db-0.cls1.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.1.0.5",
				"10-2-0-7.cls2.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.2.0.7",
				"db-2.cls2.db.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00:2::8",
			}},
		{"D2 Headless SRV over UDP", "_metrics._udp.db.demo.svc." + z, dns.TypeSRV, dns.RcodeSuccess,
			[]string{
				"_metrics._udp.db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 33 9187 db-0.cls1.db.demo.svc.clusterset.local.",
				"_metrics._udp.db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 33 9187 10-2-0-7.cls2.db.demo.svc.clusterset.local.",
				"_metrics._udp.db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 33 9187 db-2.cls2.db.demo.svc.clusterset.local.",
			},
			[]string{
				"db-0.cls1.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.1.0.5",
				"10-2-0-7.cls2.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.2.0.7",
				"db-2.cls2.db.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00:2::8",
			}},
		{"D2 Headless SRV of the service name: each ready endpoint's slice ports, else the import's", "db.demo.svc." + z, dns.TypeSRV, dns.RcodeSuccess,
			[]string{
				"db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 20 15432 db-0.cls1.db.demo.svc.clusterset.local.",
				"db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 20 5432 10-2-0-7.cls2.db.demo.svc.clusterset.local.",
				"db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 20 9187 10-2-0-7.cls2.db.demo.svc.clusterset.local.",
				"db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 20 5432 db-2.cls2.db.demo.svc.clusterset.local.",
				"db.demo.svc.clusterset.local.\t5\tIN\tSRV\t0 20 9187 db-2.cls2.db.demo.svc.clusterset.local.",
			},
			[]string{
				"db-0.cls1.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.1.0.5",
				"10-2-0-7.cls2.db.demo.svc.clusterset.local.\t5\tIN\tA\t10.2.0.7",
				"db-2.cls2.db.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00:2::8",
			}},
		{"D2 Headless without ready endpoints has no SRV at the service name", "idle.demo.svc." + z, dns.TypeSRV, dns.RcodeNameError, nil, nil},
		{"D2 Headless without ready endpoints has no SRV", "_pg._tcp.idle.demo.svc." + z, dns.TypeSRV, dns.RcodeNameError, nil, nil},
		{"unknown service", "nope.demo.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"service in a namespace that is not there", "nginx-hello.other.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"existing namespace is an empty node", "empty.svc." + z, dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"missing namespace", "other.svc." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"svc node", "svc." + z, dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"name outside svc", "nginx-hello.demo.pod." + z, dns.TypeA, dns.RcodeNameError, nil, nil},
		{"schema version", "dns-version." + z, dns.TypeTXT, dns.RcodeSuccess,
			[]string{"dns-version.clusterset.local.\t5\tIN\tTXT\t\"1.0.0\""}, nil},
		{"apex SOA", z, dns.TypeSOA, dns.RcodeSuccess,
			[]string{"clusterset.local.\t5\tIN\tSOA\tns.dns.clusterset.local. hostmaster.clusterset.local. 42 7200 1800 86400 5"}, nil},
		{"apex NS is NODATA", z, dns.TypeNS, dns.RcodeSuccess, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.answer(tt.qname, tt.qtype)
			if got.rcode != tt.rcode {
				t.Errorf("rcode %s, want %s", dns.RcodeToString[got.rcode], dns.RcodeToString[tt.rcode])
			}
			if g := rrStrings(got.answer); !reflect.DeepEqual(g, tt.answer) {
				t.Errorf("answer:\n got %q\nwant %q", g, tt.answer)
			}
			if g := rrStrings(got.extra); !reflect.DeepEqual(g, tt.extra) {
				t.Errorf("extra:\n got %q\nwant %q", g, tt.extra)
			}
		})
	}
}

// TestServiceNameSRVRecordsAppearOnce (D2): a port number shared by two protocols is one SRV record, ports without a
// number have none, and each target's addresses are in the additional section once whatever its number of ports.
func TestServiceNameSRVRecordsAppearOnce(t *testing.T) {
	const z = "clusterset.local."
	dnsPorts := []Port{{Name: "dns", Protocol: "UDP", Port: 53}, {Name: "dns-tcp", Protocol: "TCP", Port: 53}, {Name: "metrics", Port: 9153}}
	v := snapshot{synced: true, namespaces: map[string]bool{"ns": true},
		imports: map[string]Import{
			"ns/resolver": {Namespace: "ns", Name: "resolver", Type: TypeClusterSetIP, IPs: []string{"10.96.0.53"}, Ports: dnsPorts},
			"ns/peers":    {Namespace: "ns", Name: "peers", Type: TypeHeadless, Ports: dnsPorts},
			"ns/anon":     {Namespace: "ns", Name: "anon", Type: TypeHeadless, Ports: dnsPorts},
		},
		slices: map[string][]Slice{
			"ns/peers": {{ClusterID: "cls1", Ports: append([]Port{{Name: "unset"}}, dnsPorts...), Endpoints: []Endpoint{
				{Addresses: []string{"10.1.0.1", "fd00::1"}, Hostname: "p-0", Ready: true},
			}}},
			// Without the source-cluster label an endpoint has no per-endpoint name to target.
			"ns/anon": {{Endpoints: []Endpoint{{Addresses: []string{"10.1.0.2"}, Hostname: "a-0", Ready: true}}}},
		},
	}
	a := answerer{zone: z, ttl: 5, view: v}
	tests := []struct {
		qname  string
		answer []string
		extra  []string
	}{
		{"resolver.ns.svc." + z,
			[]string{
				"resolver.ns.svc.clusterset.local.\t5\tIN\tSRV\t0 50 53 resolver.ns.svc.clusterset.local.",
				"resolver.ns.svc.clusterset.local.\t5\tIN\tSRV\t0 50 9153 resolver.ns.svc.clusterset.local.",
			},
			[]string{"resolver.ns.svc.clusterset.local.\t5\tIN\tA\t10.96.0.53"}},
		{"peers.ns.svc." + z,
			[]string{
				"peers.ns.svc.clusterset.local.\t5\tIN\tSRV\t0 50 53 p-0.cls1.peers.ns.svc.clusterset.local.",
				"peers.ns.svc.clusterset.local.\t5\tIN\tSRV\t0 50 9153 p-0.cls1.peers.ns.svc.clusterset.local.",
			},
			[]string{
				"p-0.cls1.peers.ns.svc.clusterset.local.\t5\tIN\tA\t10.1.0.1",
				"p-0.cls1.peers.ns.svc.clusterset.local.\t5\tIN\tAAAA\tfd00::1",
			}},
		{"anon.ns.svc." + z, nil, nil},
	}
	for _, tt := range tests {
		got := a.answer(tt.qname, dns.TypeSRV)
		if got.rcode != dns.RcodeSuccess {
			t.Errorf("%s: rcode %s, want NOERROR", tt.qname, dns.RcodeToString[got.rcode])
		}
		if g := rrStrings(got.answer); !reflect.DeepEqual(g, tt.answer) {
			t.Errorf("%s answer:\n got %q\nwant %q", tt.qname, g, tt.answer)
		}
		if g := rrStrings(got.extra); !reflect.DeepEqual(g, tt.extra) {
			t.Errorf("%s extra:\n got %q\nwant %q", tt.qname, g, tt.extra)
		}
	}
}

func TestAnswerANYGivesBothFamilies(t *testing.T) {
	a := answerer{zone: "clusterset.local.", ttl: 5, view: demo()}
	got := rrStrings(a.answer("nginx-hello.demo.svc.clusterset.local.", dns.TypeANY).answer)
	want := []string{
		"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tA\t10.96.0.10",
		"nginx-hello.demo.svc.clusterset.local.\t5\tIN\tAAAA\tfd00::a",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestClusterSetIPImportWithoutIPsIsNODATA(t *testing.T) {
	v := demo()
	v.imports["demo/pending"] = Import{Namespace: "demo", Name: "pending", Type: TypeClusterSetIP}
	got := answerer{zone: "clusterset.local.", ttl: 5, view: v}.answer("pending.demo.svc.clusterset.local.", dns.TypeA)
	if got.rcode != dns.RcodeSuccess || len(got.answer) != 0 {
		t.Errorf("got rcode %d with %d records, want NODATA", got.rcode, len(got.answer))
	}
}

func TestSRVWeight(t *testing.T) {
	for n, want := range map[int]uint16{0: 100, 1: 100, 2: 50, 3: 33, 100: 1, 1000: 1} {
		if got := srvWeight(n); got != want {
			t.Errorf("srvWeight(%d) = %d, want %d", n, got, want)
		}
	}
}
