package clusterset

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

const soaLine = "clusterset.local.\t5\tIN\tSOA\tns.dns.clusterset.local. hostmaster.clusterset.local. 42 7200 1800 86400 5"

func newHandler(v snapshot, f fall.F) *ClusterSet {
	return &ClusterSet{Zones: []string{"clusterset.local."}, TTL: 5, Fall: f, Source: v,
		Next: test.NextHandler(dns.RcodeRefused, nil)}
}

func serve(t *testing.T, h *ClusterSet, qname string, qtype uint16) (*dns.Msg, int) {
	t.Helper()
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := h.ServeDNS(context.Background(), rec, test.Case{Qname: qname, Qtype: qtype}.Msg())
	if err != nil {
		t.Fatalf("%s: %v", qname, err)
	}
	return rec.Msg, rcode
}

// TestServeDNS runs whole DNS messages through the handler (D1, D2): answers are authoritative, and negative answers
// carry the zone's SOA.
func TestServeDNS(t *testing.T) {
	h := newHandler(demo(), fall.F{})
	cases := []test.Case{
		{Qname: "nginx-hello.demo.svc.clusterset.local.", Qtype: dns.TypeA, Rcode: dns.RcodeSuccess,
			Answer: []dns.RR{test.A("nginx-hello.demo.svc.clusterset.local.	5	IN	A	10.96.0.10")}},
		{Qname: "db.demo.svc.clusterset.local.", Qtype: dns.TypeA, Rcode: dns.RcodeSuccess,
			Answer: []dns.RR{
				test.A("db.demo.svc.clusterset.local.	5	IN	A	10.1.0.5"),
				test.A("db.demo.svc.clusterset.local.	5	IN	A	10.2.0.7"),
			}},
		{Qname: "db-0.cls1.db.demo.svc.clusterset.local.", Qtype: dns.TypeA, Rcode: dns.RcodeSuccess,
			Answer: []dns.RR{test.A("db-0.cls1.db.demo.svc.clusterset.local.	5	IN	A	10.1.0.5")}},
		{Qname: "_http._tcp.nginx-hello.demo.svc.clusterset.local.", Qtype: dns.TypeSRV, Rcode: dns.RcodeSuccess,
			Answer: []dns.RR{test.SRV("_http._tcp.nginx-hello.demo.svc.clusterset.local.	5	IN	SRV	0 100 80 nginx-hello.demo.svc.clusterset.local.")},
			Extra: []dns.RR{
				test.A("nginx-hello.demo.svc.clusterset.local.	5	IN	A	10.96.0.10"),
				test.AAAA("nginx-hello.demo.svc.clusterset.local.	5	IN	AAAA	fd00::a"),
			}},
		{Qname: "db.demo.svc.clusterset.local.", Qtype: dns.TypeSRV, Rcode: dns.RcodeSuccess,
			Answer: []dns.RR{
				test.SRV("db.demo.svc.clusterset.local.	5	IN	SRV	0 20 15432 db-0.cls1.db.demo.svc.clusterset.local."),
				test.SRV("db.demo.svc.clusterset.local.	5	IN	SRV	0 20 5432 10-2-0-7.cls2.db.demo.svc.clusterset.local."),
				test.SRV("db.demo.svc.clusterset.local.	5	IN	SRV	0 20 5432 db-2.cls2.db.demo.svc.clusterset.local."),
				test.SRV("db.demo.svc.clusterset.local.	5	IN	SRV	0 20 9187 10-2-0-7.cls2.db.demo.svc.clusterset.local."),
				test.SRV("db.demo.svc.clusterset.local.	5	IN	SRV	0 20 9187 db-2.cls2.db.demo.svc.clusterset.local."),
			},
			Extra: []dns.RR{
				test.A("10-2-0-7.cls2.db.demo.svc.clusterset.local.	5	IN	A	10.2.0.7"),
				test.A("db-0.cls1.db.demo.svc.clusterset.local.	5	IN	A	10.1.0.5"),
				test.AAAA("db-2.cls2.db.demo.svc.clusterset.local.	5	IN	AAAA	fd00:2::8"),
			}},
		{Qname: "unknown.demo.svc.clusterset.local.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{test.SOA(soaLine)}},
		{Qname: "nginx-hello.demo.svc.clusterset.local.", Qtype: dns.TypeTXT, Rcode: dns.RcodeSuccess,
			Ns: []dns.RR{test.SOA(soaLine)}},
		{Qname: "dns-version.clusterset.local.", Qtype: dns.TypeTXT, Rcode: dns.RcodeSuccess,
			Answer: []dns.RR{test.TXT(`dns-version.clusterset.local.	5	IN	TXT	"1.0.0"`)}},
	}
	for _, tc := range cases {
		msg, _ := serve(t, h, tc.Qname, tc.Qtype)
		if msg == nil {
			t.Errorf("%s %s: no reply written", tc.Qname, dns.TypeToString[tc.Qtype])
			continue
		}
		if !msg.Authoritative {
			t.Errorf("%s: reply not authoritative", tc.Qname)
		}
		if err := test.SortAndCheck(msg, tc); err != nil {
			t.Errorf("%s %s: %v", tc.Qname, dns.TypeToString[tc.Qtype], err)
		}
	}
}

func TestServeDNSPassesOtherZonesOn(t *testing.T) {
	msg, rcode := serve(t, newHandler(demo(), fall.F{}), "kubernetes.default.svc.cluster.local.", dns.TypeA)
	if msg != nil || rcode != dns.RcodeRefused {
		t.Errorf("got reply %v, rcode %d; want the next plugin's rcode %d and no reply", msg, rcode, dns.RcodeRefused)
	}
}

func TestServeDNSFallthrough(t *testing.T) {
	h := newHandler(demo(), fall.Root)
	if msg, rcode := serve(t, h, "unknown.demo.svc.clusterset.local.", dns.TypeA); msg != nil || rcode != dns.RcodeRefused {
		t.Errorf("NXDOMAIN with fallthrough: got reply %v, rcode %d; want the next plugin's", msg, rcode)
	}
	if msg, _ := serve(t, h, "nginx-hello.demo.svc.clusterset.local.", dns.TypeA); msg == nil || len(msg.Answer) != 1 {
		t.Errorf("a known name must still be answered with fallthrough on, got %v", msg)
	}
}

func TestServeDNSBeforeSyncIsSERVFAIL(t *testing.T) {
	v := demo()
	v.synced = false
	h := newHandler(v, fall.F{})
	msg, rcode := serve(t, h, "unknown.demo.svc.clusterset.local.", dns.TypeA)
	if msg != nil || rcode != dns.RcodeServerFailure {
		t.Errorf("got reply %v, rcode %d; want SERVFAIL left to the server to write", msg, rcode)
	}
	if h.Ready() {
		t.Error("Ready() before sync")
	}
	if !newHandler(demo(), fall.F{}).Ready() {
		t.Error("not Ready() after sync")
	}
}
