// Command coredns is CoreDNS v1.11 with its default plugins plus the clusterset plugin, which runs right after
// kubernetes in the plugin chain.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/core/plugin"
	"github.com/coredns/coredns/coremain"

	_ "mcs-cloudmap.local/dns/plugin/clusterset"
)

func init() {
	dnsserver.Directives = insertAfter(dnsserver.Directives, "kubernetes", "clusterset")
}

func main() { coremain.Run() }
