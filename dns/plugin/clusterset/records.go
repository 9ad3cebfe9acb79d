package clusterset

import (
	"strings"

	"github.com/miekg/dns"
)

// result is the answer to one question. rcode is NOERROR or NXDOMAIN; NOERROR without answer records is NODATA.
type result struct {
	rcode  int
	answer []dns.RR
	extra  []dns.RR
}

var (
	nxdomain = result{rcode: dns.RcodeNameError}
	noData   = result{rcode: dns.RcodeSuccess}
)

// found is a positive answer, or NODATA when there are no records of the asked type.
func found(answer []dns.RR, extra []dns.RR) result {
	if len(answer) == 0 {
		return noData
	}
	return result{rcode: dns.RcodeSuccess, answer: answer, extra: extra}
}

// answerer computes the records of one zone from a View (D1, D2; MCS DNS specification §2).
type answerer struct {
	zone   string // fully qualified, lowercase
	ttl    uint32
	serial uint32
	view   View
}

// answer answers qname (which lies in the zone; its spelling is kept as the owner name) for type qtype.
func (a answerer) answer(qname string, qtype uint16) result {
	n := parseName(qname, a.zone)
	switch n.kind {
	case kindOther:
		return nxdomain
	case kindApex:
		return a.only(qtype, dns.TypeSOA, soaRecord(a.zone, a.serial, a.ttl))
	case kindVersion:
		return a.only(qtype, dns.TypeTXT, txtRecord(qname, dnsSchemaVersion, a.ttl))
	case kindSvc:
		return noData
	case kindNamespace:
		if a.view.NamespaceExists(n.namespace) {
			return noData
		}
		return nxdomain
	}
	imp, ok := a.view.ServiceImport(n.namespace, n.service)
	if !ok {
		return nxdomain
	}
	if imp.Type == TypeHeadless {
		return a.headless(qname, qtype, n, imp)
	}
	return a.clusterSetIP(qname, qtype, n, imp)
}

// only answers rr when the question asks for its type, NODATA otherwise.
func (a answerer) only(qtype, rrtype uint16, rr dns.RR) result {
	if asks(qtype, rrtype) {
		return found([]dns.RR{rr}, nil)
	}
	return noData
}

// clusterSetIP answers for a ClusterSetIP import: the service name resolves to spec.ips and SRV targets the service
// name. Names of single clusters or endpoints must not exist for it (MCS DNS specification §2.3.4).
func (a answerer) clusterSetIP(qname string, qtype uint16, n mcsName, imp Import) result {
	target := a.serviceName(n)
	switch n.kind {
	case kindService:
		if qtype == dns.TypeSRV {
			var srvs []srvEntry
			for _, p := range imp.Ports {
				srvs = append(srvs, srvEntry{port: p.Port, target: target, addresses: imp.IPs})
			}
			return a.srvAnswer(qname, srvs)
		}
		return found(addressRecords(qname, imp.IPs, qtype, a.ttl), nil)
	case kindProto:
		return a.protoNode(imp, n)
	case kindPortProto:
		port, ok := namedPort(imp.Ports, n.port, n.proto)
		if !ok {
			return nxdomain
		}
		if !asks(qtype, dns.TypeSRV) {
			return noData
		}
		return a.srvAnswer(qname, []srvEntry{{port: port.Port, target: target, addresses: imp.IPs}})
	}
	return nxdomain
}

// headless answers for a Headless import from its ready endpoints; with none, the service has no names at all
// (MCS DNS specification §2.4.1).
func (a answerer) headless(qname string, qtype uint16, n mcsName, imp Import) result {
	targets := readyTargets(a.view.EndpointSlices(n.namespace, n.service))
	if len(targets) == 0 {
		return nxdomain
	}
	switch n.kind {
	case kindService:
		if qtype == dns.TypeSRV {
			return a.srvAnswer(qname, a.endpointSRVs(targets, n, func(t target) []Port { return endpointPorts(t, imp) }))
		}
		return found(addressRecords(qname, allAddresses(targets), qtype, a.ttl), nil)
	case kindCluster:
		for _, t := range targets {
			if t.cluster == n.cluster {
				return noData
			}
		}
		return nxdomain
	case kindEndpoint:
		for _, t := range targets {
			if t.cluster == n.cluster && t.hostname == n.hostname {
				return found(addressRecords(qname, t.addresses, qtype, a.ttl), nil)
			}
		}
		return nxdomain
	case kindProto:
		return a.protoNode(imp, n)
	case kindPortProto:
		return a.headlessSRV(qname, qtype, n, imp, targets)
	}
	return nxdomain
}

// headlessSRV answers one SRV record per ready endpoint for the named port, with the number its EndpointSlice gives
// for the port (the import's number when the slice does not name it).
func (a answerer) headlessSRV(qname string, qtype uint16, n mcsName, imp Import, targets []target) result {
	port, ok := namedPort(imp.Ports, n.port, n.proto)
	if !ok {
		return nxdomain
	}
	if !asks(qtype, dns.TypeSRV) {
		return noData
	}
	return a.srvAnswer(qname, a.endpointSRVs(targets, n, func(t target) []Port {
		if p, ok := namedPort(t.ports, n.port, n.proto); ok {
			return []Port{p}
		}
		return []Port{port}
	}))
}

// endpointSRVs lists an SRV record per port of each ready endpoint that has a cluster id, targeting its per-endpoint
// name; an endpoint without a cluster id has no such name.
func (a answerer) endpointSRVs(targets []target, n mcsName, ports func(target) []Port) []srvEntry {
	var out []srvEntry
	for _, t := range targets {
		if t.cluster == "" {
			continue
		}
		name := a.endpointName(t, n)
		for _, p := range ports(t) {
			out = append(out, srvEntry{port: p.Port, target: name, addresses: t.addresses})
		}
	}
	return out
}

// endpointPorts is an endpoint's ports for an SRV query of the service name: its EndpointSlice's, or the import's when
// the slice lists none.
func endpointPorts(t target, imp Import) []Port {
	if len(t.ports) > 0 {
		return t.ports
	}
	return imp.Ports
}

// srvEntry is one SRV record to answer: a port number, its target name and the target's addresses.
type srvEntry struct {
	port      int32
	target    string
	addresses []string
}

// srvAnswer answers an SRV record per distinct (target, port) of srvs, priority 0 and equal weights, with each
// target's A/AAAA records once in the additional section so that a client needs no second query (D2, as the
// kubernetes plugin does for cluster.local). The same port number under two protocols (DNS on 53/TCP and 53/UDP) is
// one record, and a port without a number (an EndpointSlice may leave it unset) has none.
func (a answerer) srvAnswer(qname string, srvs []srvEntry) result {
	type key struct {
		target string
		port   int32
	}
	seen := map[key]bool{}
	var distinct []srvEntry
	for _, s := range srvs {
		k := key{s.target, s.port}
		if s.port > 0 && !seen[k] {
			seen[k] = true
			distinct = append(distinct, s)
		}
	}
	var answer, extra []dns.RR
	resolved := map[string]bool{}
	for _, s := range distinct {
		answer = append(answer, srvRecord(qname, s.port, s.target, srvWeight(len(distinct)), a.ttl))
		if !resolved[s.target] {
			resolved[s.target] = true
			extra = append(extra, addressRecords(s.target, s.addresses, dns.TypeANY, a.ttl)...)
		}
	}
	return found(answer, extra)
}

// protoNode answers _<proto>.<svc>.<ns>.svc.<zone>, which exists (without records) when a named port uses proto.
func (a answerer) protoNode(imp Import, n mcsName) result {
	for _, p := range imp.Ports {
		if p.Name != "" && protocolLabel(p.Protocol) == n.proto {
			return noData
		}
	}
	return nxdomain
}

func (a answerer) serviceName(n mcsName) string {
	return n.service + "." + n.namespace + ".svc." + a.zone
}

func (a answerer) endpointName(t target, n mcsName) string {
	return t.hostname + "." + t.cluster + "." + a.serviceName(n)
}

// namedPort finds the port with a name and protocol as they appear in an SRV name (lowercase, no underscore).
// Unnamed ports have no SRV records.
func namedPort(ports []Port, name, proto string) (Port, bool) {
	for _, p := range ports {
		if p.Name != "" && strings.ToLower(p.Name) == name && protocolLabel(p.Protocol) == proto {
			return p, true
		}
	}
	return Port{}, false
}

// protocolLabel is the SRV label of a Kubernetes protocol: TCP → tcp; empty means TCP.
func protocolLabel(protocol string) string {
	if protocol == "" {
		return "tcp"
	}
	return strings.ToLower(protocol)
}

// allAddresses lists every address of targets once, in order.
func allAddresses(targets []target) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range targets {
		for _, address := range t.addresses {
			if !seen[address] {
				seen[address] = true
				out = append(out, address)
			}
		}
	}
	return out
}
