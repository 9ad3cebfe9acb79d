package clusterset

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// randomHeadless builds a Headless import whose endpoints are spread over a few clusters, with hostnames that repeat,
// hostnames left out, unready endpoints and addresses shared between clusters (overlapping pod CIDRs).
func randomHeadless(r *rand.Rand) snapshot {
	v := snapshot{synced: true, namespaces: map[string]bool{"ns": true},
		imports: map[string]Import{"ns/svc": {Namespace: "ns", Name: "svc", Type: TypeHeadless, Ports: []Port{{Name: "web", Protocol: "TCP", Port: 80}}}},
		slices:  map[string][]Slice{}}
	for i := r.IntN(5); i > 0; i-- {
		s := Slice{ClusterID: fmt.Sprintf("cls%d", r.IntN(3))}
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
	}
}
