package clusterset

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// portPool holds the ports a random cluster's slices may list: a port number under two protocols, an unnamed port and
// one without a number.
var portPool = []Port{{Name: "web", Protocol: "TCP", Port: 8080}, {Name: "dns", Protocol: "UDP", Port: 53},
	{Name: "dns-tcp", Protocol: "TCP", Port: 53}, {Protocol: "TCP", Port: 9000}, {Name: "unset", Protocol: "TCP"}}

// randomPorts picks a subset of portPool; often none, so that the import's ports apply.
func randomPorts(r *rand.Rand) []Port {
	var out []Port
	for _, p := range portPool {
		if r.IntN(3) == 0 {
			out = append(out, p)
		}
	}
	return out
}

// randomHeadless builds a Headless import whose endpoints are spread over a few clusters, with hostnames that repeat,
// hostnames left out, unready endpoints and addresses shared between clusters (overlapping pod CIDRs). The slices of
// one cluster list the same ports, as one cluster's Service has one set of ports.
func randomHeadless(r *rand.Rand) snapshot {
	v := snapshot{synced: true, namespaces: map[string]bool{"ns": true},
		imports: map[string]Import{"ns/svc": {Namespace: "ns", Name: "svc", Type: TypeHeadless, Ports: []Port{{Name: "web", Protocol: "TCP", Port: 80}}}},
		slices:  map[string][]Slice{}}
	clusterPorts := [][]Port{randomPorts(r), randomPorts(r), randomPorts(r)}
	for i := r.IntN(5); i > 0; i-- {
		c := r.IntN(3)
		s := Slice{ClusterID: fmt.Sprintf("cls%d", c), Ports: clusterPorts[c]}
		for j := r.IntN(6); j > 0; j-- {
			e := Endpoint{Ready: r.IntN(3) > 0, Addresses: []string{fmt.Sprintf("10.0.0.%d", r.IntN(20))}}
			if r.IntN(2) == 0 {
				e.Hostname = fmt.Sprintf("pod-%d", r.IntN(4))
			}
			s.Endpoints = append(s.Endpoints, e)
		}
		v.slices["ns/svc"] = append(v.slices["ns/svc"], s)
	}
	return v
}

func addressesOf(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestHeadlessProperties (D1, D2): the service name resolves to exactly the ready addresses; every SRV target
// resolves, only to ready addresses, and there is one SRV record per (cluster, hostname) of a ready endpoint.
func TestHeadlessProperties(t *testing.T) {
	const z = "clusterset.local."
	for seed := range uint64(500) {
		v := randomHeadless(rand.New(rand.NewPCG(seed, 1645)))
		a := answerer{zone: z, ttl: 5, view: v}
		ready := map[string]bool{}
		names := map[string]bool{}
		for _, s := range v.slices["ns/svc"] {
			for _, e := range s.Endpoints {
				if !e.Ready {
					continue
				}
				ready[e.Addresses[0]] = true
				hostname := e.Hostname
				if hostname == "" {
					hostname = addressLabel(e.Addresses[0])
				}
				names[hostname+"."+s.ClusterID] = true
			}
		}
		var want []string
		for address := range ready {
			want = append(want, address)
		}
		slices.Sort(want)

		svc := a.answer("svc.ns.svc."+z, dns.TypeA)
		if got := addressesOf(svc.answer); !slices.Equal(got, want) {
			t.Fatalf("seed %d: service A %v, want the ready addresses %v", seed, got, want)
		}
		if len(want) == 0 && svc.rcode != dns.RcodeNameError {
			t.Fatalf("seed %d: no ready endpoint but rcode %d", seed, svc.rcode)
		}
		srv := a.answer("_web._tcp.svc.ns.svc."+z, dns.TypeSRV)
		if len(srv.answer) != len(names) {
			t.Fatalf("seed %d: %d SRV records, want one per ready (cluster, hostname): %d", seed, len(srv.answer), len(names))
		}
		for _, rr := range srv.answer {
			target := rr.(*dns.SRV).Target
			res := a.answer(target, dns.TypeA)
			if res.rcode != dns.RcodeSuccess || len(res.answer) == 0 {
				t.Fatalf("seed %d: SRV target %s does not resolve (rcode %d)", seed, target, res.rcode)
			}
			for _, address := range addressesOf(res.answer) {
				if !ready[address] || net.ParseIP(address) == nil {
					t.Fatalf("seed %d: %s resolves to %s, which no ready endpoint has", seed, target, address)
				}
			}
		}
		checkServiceNameSRV(t, seed, a, v)
	}
}

// checkServiceNameSRV (D2): SRV of the bare service name has exactly one record per (ready endpoint name, port number
// of its cluster's slices, else of the import), equal weights, and in the additional section each target's addresses
// once, the same as a query of the target gives.
func checkServiceNameSRV(t *testing.T, seed uint64, a answerer, v snapshot) {
	t.Helper()
	imp := v.imports["ns/svc"]
	want := map[string]bool{}
	for _, s := range v.slices["ns/svc"] {
		ports := s.Ports
		if len(ports) == 0 {
			ports = imp.Ports
		}
		for _, e := range s.Endpoints {
			hostname := e.Hostname
			if hostname == "" {
				hostname = addressLabel(e.Addresses[0])
			}
			for _, p := range ports {
				if e.Ready && p.Port > 0 {
					want[fmt.Sprintf("%s.%s.svc.ns.svc.%s:%d", hostname, s.ClusterID, a.zone, p.Port)] = true
				}
			}
		}
	}
	res := a.answer("svc.ns.svc."+a.zone, dns.TypeSRV)
	got := map[string]bool{}
	targets := map[string]bool{}
	for _, rr := range res.answer {
		srv := rr.(*dns.SRV)
		key := fmt.Sprintf("%s:%d", srv.Target, srv.Port)
		if got[key] {
			t.Fatalf("seed %d: SRV %s twice", seed, key)
		}
		got[key] = true
		targets[srv.Target] = true
		if first := res.answer[0].(*dns.SRV); srv.Priority != 0 || srv.Weight != first.Weight || int(srv.Weight)*len(res.answer) > 100 {
			t.Fatalf("seed %d: priority %d weight %d of %d records; want 0 and equal shares of 100", seed, srv.Priority, srv.Weight, len(res.answer))
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("seed %d: bare SRV %v, want %v", seed, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	extra := map[string][]string{}
	for _, rr := range res.extra {
		extra[rr.Header().Name] = append(extra[rr.Header().Name], rr.(*dns.A).A.String())
	}
	for target := range targets {
		direct := addressesOf(a.answer(target, dns.TypeA).answer)
		slices.Sort(extra[target])
		if !slices.Equal(extra[target], direct) {
			t.Fatalf("seed %d: additional section gives %s %v, a query gives %v", seed, target, extra[target], direct)
		}
	}
	if len(extra) != len(targets) {
		t.Fatalf("seed %d: additional section names %d targets, the answer %d", seed, len(extra), len(targets))
	}
}

// TestClusterSetIPServiceNameSRVProperties (D2): for random ports (numbers shared between protocols, unnamed ports,
// ports without a number), SRV of the service name has one record per distinct port number, all targeting the service
// name, and every record of a _<port>._<proto> name is among them.
func TestClusterSetIPServiceNameSRVProperties(t *testing.T) {
	const z = "clusterset.local."
	const name = "svc.ns.svc." + z
	protocols := []string{"TCP", "UDP", "SCTP", ""}
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 2))
		imp := Import{Namespace: "ns", Name: "svc", Type: TypeClusterSetIP, IPs: []string{"10.96.0.1"}}
		want := map[uint16]bool{}
		for i := range r.IntN(6) {
			p := Port{Name: fmt.Sprintf("p%d", i), Protocol: protocols[r.IntN(len(protocols))], Port: int32(r.IntN(4) * 80)}
			if r.IntN(4) == 0 {
				p.Name = ""
			}
			if p.Port > 0 {
				want[uint16(p.Port)] = true
			}
			imp.Ports = append(imp.Ports, p)
		}
		a := answerer{zone: z, ttl: 5, view: snapshot{synced: true, namespaces: map[string]bool{"ns": true},
			imports: map[string]Import{"ns/svc": imp}}}
		bare := a.answer(name, dns.TypeSRV)
		got := map[uint16]bool{}
		for _, rr := range bare.answer {
			srv := rr.(*dns.SRV)
			if got[srv.Port] || srv.Target != name {
				t.Fatalf("seed %d: record %v repeated or not targeting %s", seed, srv, name)
			}
			got[srv.Port] = true
		}
		if !maps.Equal(got, want) {
			t.Fatalf("seed %d: ports %v, want one record per port number %v (ports %+v)", seed, got, want, imp.Ports)
		}
		for _, p := range imp.Ports {
			if p.Name == "" || p.Port == 0 {
				continue
			}
			for _, rr := range a.answer("_"+p.Name+"._"+protocolLabel(p.Protocol)+"."+name, dns.TypeSRV).answer {
				if port := rr.(*dns.SRV).Port; !got[port] {
					t.Fatalf("seed %d: _%s SRV gives port %d, which the service name's SRV lacks", seed, p.Name, port)
				}
			}
		}
	}
}
