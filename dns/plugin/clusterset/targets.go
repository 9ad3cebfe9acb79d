package clusterset

import (
	"net/netip"
	"strings"
)

// target is one named endpoint of a Headless import: <hostname>.<clusterid>.<svc>.<ns>.svc.<zone> and its addresses.
type target struct {
	cluster   string
	hostname  string
	addresses []string
	ports     []Port // the ports of the EndpointSlice the endpoint is in
}

// readyTargets lists the ready endpoints of slices, one target per (cluster, hostname). An endpoint without a
// hostname gets one target per address, named after the address (the "unique, system-assigned identifier" the
// Kubernetes DNS specification allows), as the kubernetes plugin does for cluster.local.
func readyTargets(slices []Slice) []target {
	var out []target
	index := map[[2]string]int{}
	add := func(cluster, hostname string, addresses []string, ports []Port) {
		key := [2]string{cluster, hostname}
		if i, ok := index[key]; ok {
			out[i].addresses = appendUnique(out[i].addresses, addresses...)
			return
		}
		index[key] = len(out)
		out = append(out, target{cluster: cluster, hostname: hostname, addresses: appendUnique(nil, addresses...), ports: ports})
	}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if !e.Ready {
				continue
			}
			if e.Hostname != "" {
				add(s.ClusterID, strings.ToLower(e.Hostname), e.Addresses, s.Ports)
				continue
			}
			for _, a := range e.Addresses {
				add(s.ClusterID, addressLabel(a), []string{a}, s.Ports)
			}
		}
	}
	return out
}

// addressLabel turns an IP address into a DNS label: 10.1.2.3 → 10-1-2-3, fd00::1 → fd00--1.
func addressLabel(address string) string {
	if ip, err := netip.ParseAddr(address); err == nil {
		address = ip.String()
	}
	return strings.NewReplacer(".", "-", ":", "-").Replace(address)
}

// appendUnique appends the values not already in list, keeping order.
func appendUnique(list []string, values ...string) []string {
	for _, v := range values {
		seen := false
		for _, have := range list {
			if have == v {
				seen = true
				break
			}
		}
		if !seen {
			list = append(list, v)
		}
	}
	return list
}
