package clusterset

import (
	"fmt"
	"strconv"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"
)

// defaultZone is the MCS zone (D1).
const defaultZone = "clusterset.local."

// defaultTTL matches the kubernetes plugin's default, so both zones age alike in caches.
const defaultTTL = 5

// config is one `clusterset` block of a Corefile:
//
//	clusterset [ZONES...] {
//	    kubeconfig PATH [CONTEXT]
//	    ttl SECONDS
//	    fallthrough [ZONES...]
//	}
type config struct {
	zones      []string
	kubeconfig string // empty: in-cluster configuration
	context    string // empty: the kubeconfig's current context
	ttl        uint32
	fall       fall.F
}

// parseConfig reads the plugin's block; without zones it serves clusterset.local.
func parseConfig(c *caddy.Controller) (config, error) {
	cfg := config{ttl: defaultTTL}
	blocks := 0
	for c.Next() {
		if blocks++; blocks > 1 {
			return cfg, plugin.Error(pluginName, c.Err("only one clusterset block per server block is allowed: list several zones in one block"))
		}
		args := c.RemainingArgs()
		if len(args) == 0 {
			args = []string{defaultZone}
		}
		cfg.zones = plugin.OriginsFromArgsOrServerBlock(args, c.ServerBlockKeys)
		for c.NextBlock() {
			if err := parseOption(c, &cfg); err != nil {
				return cfg, plugin.Error(pluginName, err)
			}
		}
	}
	return cfg, nil
}

func parseOption(c *caddy.Controller, cfg *config) error {
	switch option := c.Val(); option {
	case "kubeconfig":
		args := c.RemainingArgs()
		if len(args) < 1 || len(args) > 2 {
			return c.Errf("kubeconfig takes a file path and an optional context name, got %d arguments", len(args))
		}
		cfg.kubeconfig = args[0]
		if len(args) == 2 {
			cfg.context = args[1]
		}
	case "ttl":
		args := c.RemainingArgs()
		if len(args) != 1 {
			return c.Errf("ttl takes one number of seconds, got %d arguments", len(args))
		}
		ttl, err := strconv.ParseUint(args[0], 10, 32)
		if err != nil || ttl > 3600 {
			return c.Errf("ttl %q must be a whole number of seconds between 0 and 3600", args[0])
		}
		cfg.ttl = uint32(ttl)
	case "fallthrough":
		cfg.fall.SetZonesFromArgs(c.RemainingArgs())
	default:
		return c.Err(fmt.Sprintf("unknown option %q: expected kubeconfig, ttl or fallthrough", option))
	}
	return nil
}
