package clusterset

import (
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"k8s.io/client-go/discovery"
)

var log = clog.NewWithPlugin(pluginName)

// syncWait bounds how long server start waits for the informers; after it the server answers SERVFAIL in the zone
// (and the ready plugin reports not ready) until they sync.
const syncWait = 5 * time.Second

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, err := parseConfig(c)
	if err != nil {
		return err
	}
	rc, err := restConfig(cfg)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	gvr, err := serviceImportResource(d)
	if err != nil {
		// Watching anyway: the informer keeps retrying, so the zone starts answering once the CRD is installed.
		log.Warningf("%v; watching %s until it is served", err, gvr)
	}
	s, err := newStore(rc, gvr)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	c.OnStartup(func() error {
		s.start()
		if !s.waitForSync(syncWait) {
			log.Warningf("ServiceImports (%s), EndpointSlices and Namespaces not listed after %s: answering SERVFAIL in %v until they are", gvr, syncWait, cfg.zones)
		}
		return nil
	})
	c.OnShutdown(func() error {
		s.shutdown()
		return nil
	})
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		return &ClusterSet{Next: next, Zones: cfg.zones, TTL: cfg.ttl, Fall: cfg.fall, Source: s}
	})
	return nil
}
