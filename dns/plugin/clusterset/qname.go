package clusterset

import (
	"strings"

	"github.com/miekg/dns"
)

// nameKind says which kind of MCS DNS name a query name is (D1, D2; the MCS DNS specification §2).
type nameKind int

const (
	kindOther     nameKind = iota // not a name the specification defines: NXDOMAIN
	kindApex                      // <zone>
	kindVersion                   // dns-version.<zone>
	kindSvc                       // svc.<zone>
	kindNamespace                 // <ns>.svc.<zone>
	kindService                   // <svc>.<ns>.svc.<zone>
	kindCluster                   // <clusterid>.<svc>.<ns>.svc.<zone>
	kindEndpoint                  // <hostname>.<clusterid>.<svc>.<ns>.svc.<zone>
	kindProto                     // _<proto>.<svc>.<ns>.svc.<zone>
	kindPortProto                 // _<port>._<proto>.<svc>.<ns>.svc.<zone>
)

// mcsName is a query name taken apart; labels are lowercase and without their leading underscore.
type mcsName struct {
	kind      nameKind
	namespace string
	service   string
	cluster   string
	hostname  string
	port      string
	proto     string
}

// parseName takes apart qname, which must lie in zone (both fully qualified; matched case-insensitively).
func parseName(qname, zone string) mcsName {
	qname, zone = strings.ToLower(dns.Fqdn(qname)), strings.ToLower(dns.Fqdn(zone))
	if qname == zone {
		return mcsName{kind: kindApex}
	}
	rel, ok := strings.CutSuffix(qname, "."+zone)
	if zone == "." {
		rel, ok = strings.TrimSuffix(qname, "."), true
	}
	if !ok {
		return mcsName{}
	}
	labels := dns.SplitDomainName(rel)
	n := len(labels)
	if n == 1 && labels[0] == "dns-version" {
		return mcsName{kind: kindVersion}
	}
	if labels[n-1] != "svc" {
		return mcsName{}
	}
	switch n {
	case 1:
		return mcsName{kind: kindSvc}
	case 2:
		return mcsName{kind: kindNamespace, namespace: labels[0]}
	}
	name := mcsName{namespace: labels[n-2], service: labels[n-3]}
	first, firstIsService := strings.CutPrefix(labels[0], "_")
	switch {
	case n == 3:
		name.kind = kindService
	case n == 4 && firstIsService:
		name.kind, name.proto = kindProto, first
	case n == 4:
		name.kind, name.cluster = kindCluster, labels[0]
	case n == 5 && firstIsService && strings.HasPrefix(labels[1], "_"):
		name.kind, name.port, name.proto = kindPortProto, first, labels[1][1:]
	case n == 5 && !firstIsService && !strings.HasPrefix(labels[1], "_"):
		name.kind, name.hostname, name.cluster = kindEndpoint, labels[0], labels[1]
	default:
		return mcsName{}
	}
	return name
}
