package clusterset

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// pluginName is the Corefile directive and the name in logs and metrics.
const pluginName = "clusterset"

// Source is a View that also says whether it has its first full copy of the cluster's objects and gives a serial
// number that changes when they change (for the SOA).
type Source interface {
	View
	Synced() bool
	Serial() uint32
}

// ClusterSet answers the MCS DNS names of its zones (D1, D2) from a cluster's ServiceImports, EndpointSlices and
// Namespaces.
type ClusterSet struct {
	Next   plugin.Handler
	Zones  []string
	TTL    uint32
	Fall   fall.F
	Source Source
}

// Name implements plugin.Handler.
func (c *ClusterSet) Name() string { return pluginName }

// ServeDNS implements plugin.Handler. Until the Source has synced it answers SERVFAIL rather than a wrong NXDOMAIN.
func (c *ClusterSet) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	zone := plugin.Zones(c.Zones).Matches(state.Name())
	if zone == "" {
		return plugin.NextOrFailure(c.Name(), c.Next, ctx, w, r)
	}
	if !c.Source.Synced() {
		return dns.RcodeServerFailure, nil
	}
	a := answerer{zone: zone, ttl: c.TTL, serial: c.Source.Serial(), view: c.Source}
	res := a.answer(state.QName(), state.QType())
	if res.rcode == dns.RcodeNameError && c.Fall.Through(state.Name()) {
		return plugin.NextOrFailure(c.Name(), c.Next, ctx, w, r)
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.Rcode = res.rcode
	m.Answer = res.answer
	m.Extra = res.extra
	if len(res.answer) == 0 {
		m.Ns = []dns.RR{soaRecord(zone, a.serial, c.TTL)}
	}
	if err := w.WriteMsg(m); err != nil {
		return dns.RcodeServerFailure, err
	}
	return dns.RcodeSuccess, nil
}

// Ready implements the ready plugin's Readiness: ready once the informers have synced.
func (c *ClusterSet) Ready() bool { return c.Source.Synced() }
