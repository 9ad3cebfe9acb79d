package clusterset

import (
	"net"

	"github.com/miekg/dns"
)

// dnsSchemaVersion is the version of the MCS DNS specification implemented, served as TXT at dns-version.<zone>.
const dnsSchemaVersion = "1.0.0"

func header(owner string, rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: owner, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
}

// addressRecords returns an A record per IPv4 and an AAAA record per IPv6 address whose type the question asks for;
// unparsable addresses are left out.
func addressRecords(owner string, addresses []string, qtype uint16, ttl uint32) []dns.RR {
	var out []dns.RR
	for _, a := range addresses {
		ip := net.ParseIP(a)
		switch {
		case ip == nil:
		case ip.To4() != nil && asks(qtype, dns.TypeA):
			out = append(out, &dns.A{Hdr: header(owner, dns.TypeA, ttl), A: ip.To4()})
		case ip.To4() == nil && asks(qtype, dns.TypeAAAA):
			out = append(out, &dns.AAAA{Hdr: header(owner, dns.TypeAAAA, ttl), AAAA: ip})
		}
	}
	return out
}

func srvRecord(owner string, port int32, target string, weight uint16, ttl uint32) dns.RR {
	return &dns.SRV{Hdr: header(owner, dns.TypeSRV, ttl), Priority: 0, Weight: weight, Port: uint16(port), Target: target}
}

func txtRecord(owner, text string, ttl uint32) dns.RR {
	return &dns.TXT{Hdr: header(owner, dns.TypeTXT, ttl), Txt: []string{text}}
}

// soaRecord is the zone's SOA, answered for SOA questions and put in the authority section of negative answers
// (RFC 2308) with the minimum TTL as the negative-caching time.
func soaRecord(zone string, serial, ttl uint32) dns.RR {
	return &dns.SOA{
		Hdr:     header(zone, dns.TypeSOA, ttl),
		Ns:      dns.Fqdn("ns.dns." + zone),
		Mbox:    dns.Fqdn("hostmaster." + zone),
		Serial:  serial,
		Refresh: 7200,
		Retry:   1800,
		Expire:  86400,
		Minttl:  ttl,
	}
}

// srvWeight shares a weight of 100 among n equal SRV records (RFC 2782 leaves the values to the server).
func srvWeight(n int) uint16 {
	if n <= 1 {
		return 100
	}
	if w := 100 / n; w > 0 {
		return uint16(w)
	}
	return 1
}

// asks reports whether a question of type qtype wants records of type rrtype.
func asks(qtype, rrtype uint16) bool {
	return qtype == rrtype || qtype == dns.TypeANY
}
