package clusterset

import (
	"reflect"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		input      string
		zones      []string
		kubeconfig string
		context    string
		ttl        uint32
		fall       []string
	}{
		{`clusterset`, []string{"clusterset.local."}, "", "", 5, nil},
		{`clusterset clusterset.local {
			kubeconfig /tmp/kc cls1
		}`, []string{"clusterset.local."}, "/tmp/kc", "cls1", 5, nil},
		{`clusterset mcs.example other.example {
			kubeconfig /tmp/kc
			ttl 30
			fallthrough
		}`, []string{"mcs.example.", "other.example."}, "/tmp/kc", "", 30, []string{"."}},
		{`clusterset {
			fallthrough clusterset.local
		}`, []string{"clusterset.local."}, "", "", 5, []string{"clusterset.local."}},
	}
	for _, tt := range tests {
		cfg, err := parseConfig(caddy.NewTestController("dns", tt.input))
		if err != nil {
			t.Errorf("%q: %v", tt.input, err)
			continue
		}
		got := []any{cfg.zones, cfg.kubeconfig, cfg.context, cfg.ttl, cfg.fall.Zones}
		want := []any{tt.zones, tt.kubeconfig, tt.context, tt.ttl, tt.fall}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", tt.input, got, want)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := map[string]string{
		"clusterset {\n kubeconfig\n}":         "kubeconfig takes a file path",
		"clusterset {\n kubeconfig a b c\n}":   "kubeconfig takes a file path",
		"clusterset {\n ttl\n}":                "ttl takes one number",
		"clusterset {\n ttl -1\n}":             "between 0 and 3600",
		"clusterset {\n ttl 3601\n}":           "between 0 and 3600",
		"clusterset {\n noendpoints\n}":        `unknown option "noendpoints"`,
		"clusterset\nclusterset other.example": "only one clusterset block",
	}
	for input, want := range tests {
		_, err := parseConfig(caddy.NewTestController("dns", input))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", input, err, want)
		}
	}
}
