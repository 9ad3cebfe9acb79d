package clusterset

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// restConfig connects with the kubeconfig file and context of the Corefile, or in-cluster when no kubeconfig is set.
func restConfig(cfg config) (*rest.Config, error) {
	if cfg.kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster Kubernetes configuration: %w (outside a cluster, set `kubeconfig PATH [CONTEXT]`)", err)
		}
		return rc, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: cfg.kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.context}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s (context %q): %w", cfg.kubeconfig, cfg.context, err)
	}
	return rc, nil
}
